//! Packs: the list, a pack's prompts, a whole label as a bundle, the
//! label history of a pack.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use promptreg::remote::wire::BundleHeaders;
use promptreg_store::Scope;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::conditional;
use crate::auth::Caller;
use crate::body::Moves;
use crate::extract::{LabelName, PackName, Path};
use crate::problem::{Problem, ProblemDetails};
use crate::state::AppState;

/// `GET /v1/packs`.
#[utoipa::path(
    get, path = "/v1/packs", tag = "packs",
    responses(
        (status = 200, description = "The packs in the store", body = crate::body::PackList,
            headers(("ETag" = String, description = "Strong entity tag"))),
        (status = 304, description = "Not modified"),
        crate::responses::KeyOrStore,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn list_packs(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let all = state.cache.packs().await?;
    match caller.pack_filter() {
        None => Ok(conditional(&headers, &all)),
        Some(only) => {
            let list: crate::body::PackList =
                serde_json::from_slice::<serde_json::Value>(&all.body)
                    .ok()
                    .map(|v| crate::body::PackList {
                        packs: v["packs"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|p| p.as_str())
                            .filter(|p| *p == only)
                            .map(str::to_owned)
                            .collect(),
                    })
                    .unwrap_or(crate::body::PackList { packs: Vec::new() });
            Ok(Json(list).into_response())
        }
    }
}

/// `GET /v1/packs/{pack}/prompts`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/prompts", tag = "packs",
    params(("pack" = String, Path, description = "The pack's name")),
    responses(
        (status = 200, description = "Every prompt with its labels, versions, locales and kind", body = crate::body::PromptList,
            headers(("ETag" = String, description = "Strong entity tag"))),
        (status = 304, description = "Not modified"),
        (status = 400, description = "Invalid pack name", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn list_prompts(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(pack): Path<PackName>,
) -> Result<Response, Problem> {
    let pack = pack.as_str();
    caller.require(pack, Scope::Read)?;
    let listing = state.cache.listing(pack).await?;
    Ok(conditional(&headers, &listing))
}

/// `GET /v1/packs/{pack}/labels/{label}`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/labels/{label}", tag = "packs",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("label" = String, Path, description = "The label"),
        ("If-None-Match" = Option<String>, Header, description = "The ETag the client holds"),
    ),
    responses(
        (status = 200, description = "Every entry of the pack at the label, with its files and version", body = crate::body::Bundle,
            headers(
                ("ETag" = String, description = "A digest of every entry's digest"),
                ("Promptreg-Revision" = u64, description = "The label's revision this state is (absent for a label with no revision yet)"),
                ("Promptreg-Split" = String, description = "The split running on the label, if one is: `id=4; share=1000; digest=…` (share in basis points; the digest is the ETag of `GET …/labels/{label}/split/bundle`)"),
                ("Promptreg-Signature" = String, description = "A signature of the revision by a releaser's key, one header each: the SSH signature (namespace `promptreg-release`) of `promptreg release v1`, pack, label, revision and digest, its base64 on one line"),
            )),
        (status = 304, description = "The client's copy is current",
            headers(
                ("Promptreg-Revision" = u64, description = "The label's revision this state is: a restore can bring the same state back as a new revision"),
                ("Promptreg-Signature" = String, description = "A signature of that revision, one header each"),
            )),
        (status = 400, description = "Invalid pack or label", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, or no manifest at that label", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn get_bundle(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path((pack, name)): Path<(PackName, LabelName)>,
) -> Result<Response, Problem> {
    let (pack, name) = (pack.as_str(), name.0);
    caller.require(pack, Scope::Read)?;
    let view = state.cache.label(pack, &name).await?;
    let mut response = conditional(&headers, &view.bundle);
    add_wire_headers(&mut response, &view.wire_headers());
    Ok(response)
}

/// The follow protocol's headers (`Promptreg-Revision`, one
/// `Promptreg-Signature` each, `Promptreg-Split`) on a bundle's response,
/// as the protocol's one definition encodes them.
pub(crate) fn add_wire_headers(response: &mut Response, wire: &BundleHeaders) {
    for (name, value) in wire.encode() {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .append(HeaderName::from_static(name), value);
        }
    }
}

/// `GET /v1/packs/{pack}/history`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/history", tag = "labels",
    params(("pack" = String, Path, description = "The pack's name")),
    responses(
        (status = 200, description = "Every label move of the pack, oldest first", body = Moves),
        (status = 400, description = "Invalid pack name", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn pack_history(
    State(state): State<AppState>,
    caller: Caller,
    Path(pack): Path<PackName>,
) -> Result<Json<Moves>, Problem> {
    let pack = pack.as_str();
    caller.require(pack, Scope::Read)?;
    let moves = state.store.history(pack, None).await?;
    Ok(Json(Moves::of(&moves)))
}

/// Its routes, with their OpenAPI paths.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_packs))
        .routes(routes!(list_prompts))
        .routes(routes!(get_bundle))
        .routes(routes!(pack_history))
}
