//! Rendering on the server: render and explain.

use axum::Json;
use axum::extract::State;
use promptreg::Locale;
use promptreg_store::Scope;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::actions::explained;
use crate::auth::Caller;
use crate::body::{ExplainResponse, RenderRequest, RenderResponse, SplitArm};
use crate::cache::Renderer;
use crate::extract::{JsonBody, PackName, Path, PromptName, label};
use crate::problem::{Problem, ProblemCode, ProblemDetails};
use crate::state::AppState;
use promptreg::Rendering;

/// The renderer of the label asked for (built off the async workers): of
/// its split's candidate when the request's subject gets it; the locale;
/// the split and the subject's arm, when a split runs and a subject is
/// given.
async fn renderer_for(
    state: &AppState,
    pack: &str,
    request: &RenderRequest,
) -> Result<(Renderer, Locale, Option<SplitArm>), Problem> {
    let name = label(&request.label)?;
    let mut view = state.cache.label(pack, &name).await?;
    let arm = match (&view.split, &request.subject) {
        (Some(split), Some(subject)) => Some((split.rule.id, split.rule.arm(subject))),
        _ => None,
    };
    if let Some((_, promptreg::split::Arm::Candidate)) = arm {
        view = state.cache.candidate(pack, &name).await?;
    }
    let arm = arm.map(|(split, arm)| SplitArm {
        split,
        arm: arm.as_str().to_owned(),
    });
    let renderer = view.renderer_in(&state.heavy).await?;
    let locale = match &request.locale {
        Some(tag) => Locale::parse(tag)?,
        None => renderer.pack.default_locale().clone(),
    };
    Ok((renderer, locale, arm))
}

/// `POST /v1/packs/{pack}/prompts/{id}/render`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/prompts/{id}/render", tag = "render",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id"),
    ),
    request_body = RenderRequest,
    responses(
        (status = 200, description = "The text the application sends", body = RenderResponse),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, label or prompt", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
        (status = 422, description = "The render failed (a template error, a variable of the wrong type)", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn render(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id)): Path<(PackName, PromptName)>,
    JsonBody(request): JsonBody<RenderRequest>,
) -> Result<Json<RenderResponse>, Problem> {
    let (pack, id) = (pack.as_str(), id.as_str());
    caller.require(pack, Scope::Read)?;
    let (renderer, locale, split) = renderer_for(&state, pack, &request).await?;
    let id = id.to_owned();
    // A render's cost grows with its prompt, its templates and its
    // context: it runs off the async workers too.
    state
        .heavy
        .run(move || rendered(&renderer.registry, id, request, locale))
        .await?
        .map(|response| Json(RenderResponse { split, ..response }))
}

/// The response to `POST …/render`: text, and messages for a chat prompt.
fn rendered(
    registry: &promptreg::PromptRegistry,
    id: String,
    request: RenderRequest,
    locale: Locale,
) -> Result<RenderResponse, Problem> {
    let rendering =
        registry
            .snapshot()
            .render_any_in(&id, &request.context, &locale, &request.histories())?;
    let (text, messages) = match rendering {
        Rendering::Messages(messages) => {
            let text =
                promptreg::messages_as_text(messages.iter().map(|m| (&m.role, m.content.as_str())));
            (text, Some(messages))
        }
        Rendering::Text(text) => (text, None),
    };
    let snapshot = registry.snapshot();
    let model = snapshot
        .model_settings(&id, &locale)
        .ok()
        .flatten()
        .map(|m| m.to_value());
    let contract = snapshot
        .contract(&id, &locale)
        .ok()
        .flatten()
        .and_then(|c| serde_json::to_value(&*c).ok());
    let provider_request = match request.format {
        Some(format) => {
            let histories = request.histories();
            let render = promptreg::RenderRequest::new(&id, &request.context)
                .locale(&locale)
                .histories(&histories);
            let body = snapshot.provider_request_json(&render, format.into())?;
            let body = serde_json::value::RawValue::from_string(body).map_err(|e| {
                promptreg::Error::new(promptreg::ErrorKind::InvalidContract, e.to_string())
            })?;
            Some(body)
        }
        None => None,
    };
    let warnings = locale_warnings(&request, &locale);
    Ok(RenderResponse {
        id,
        label: request.label,
        warnings,
        locale: locale.as_str().to_owned(),
        text,
        messages,
        model,
        contract,
        provider_request,
        split: None,
    })
}

/// The warnings of a render request: its `locale` when it names no known
/// language.
fn locale_warnings(request: &RenderRequest, locale: &Locale) -> Vec<String> {
    request
        .locale
        .as_ref()
        .and_then(|_| locale.unknown_language_warning("the request's `locale`"))
        .into_iter()
        .collect()
}

/// `POST /v1/packs/{pack}/prompts/{id}/explain`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/prompts/{id}/explain", tag = "render",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("id" = String, Path, description = "The prompt id"),
    ),
    request_body = RenderRequest,
    responses(
        (status = 200, description = "The text, the locale lookup, and every part with its origin", body = ExplainResponse),
        (status = 400, description = "Invalid input", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack, label or prompt", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
        (status = 422, description = "The render failed", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn explain(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, id)): Path<(PackName, PromptName)>,
    JsonBody(request): JsonBody<RenderRequest>,
) -> Result<Json<ExplainResponse>, Problem> {
    let (pack, id) = (pack.as_str(), id.as_str());
    caller.require(pack, Scope::Read)?;
    if request.format.is_some() {
        return Err(Problem::bad_request(
            ProblemCode::InvalidBody,
            "`format` shapes a render for a provider: ask `…/render` for it; explain takes none",
        ));
    }
    let (renderer, locale, split) = renderer_for(&state, pack, &request).await?;
    let id = id.to_owned();
    state
        .heavy
        .run(move || {
            let rendered =
                serde_json::to_value(explained(&renderer.registry, &id, &request, &locale)?);
            Ok(Json(ExplainResponse {
                warnings: locale_warnings(&request, &locale),
                label: request.label,
                rendered: rendered.unwrap_or_default(),
                split,
            }))
        })
        .await?
}

/// Its routes, with their OpenAPI paths.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(render))
        .routes(routes!(explain))
}
