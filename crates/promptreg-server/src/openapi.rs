//! The OpenAPI 3.1 document, generated from the handlers' annotations: the
//! router is built from the same list, so a route cannot miss from it.

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::serve::AppState;
use crate::{api, events, metrics};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "promptreg",
        description = "Prompts by pack, version and label, with conditional requests and a live stream of changes. \
            Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`."
    ),
    modifiers(&BearerKeys),
    components(schemas(crate::problem::ProblemDetails)),
    tags(
        (name = "packs", description = "Packs, their prompts, and whole labels as bundles"),
        (name = "prompts", description = "Versions of a prompt"),
        (name = "labels", description = "Moving labels: If-Match, rollback, release, history"),
        (name = "render", description = "Rendering on the server"),
        (name = "events", description = "The change stream"),
        (name = "operations", description = "Health, readiness, metrics"),
    )
)]
struct ApiDoc;

/// `Authorization: Bearer prk_…`.
struct BearerKeys;

impl Modify for BearerKeys {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// Every documented route.
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(api::list_packs))
        .routes(routes!(api::list_prompts))
        .routes(routes!(api::get_prompt))
        .routes(routes!(api::list_versions, api::create_version))
        .routes(routes!(api::prompt_history))
        .routes(routes!(api::move_label))
        .routes(routes!(api::rollback))
        .routes(routes!(api::diff))
        .routes(routes!(api::render))
        .routes(routes!(api::explain))
        .routes(routes!(api::get_bundle))
        .routes(routes!(api::release))
        .routes(routes!(api::pack_history))
        .routes(routes!(events::stream))
        .routes(routes!(api::healthz))
        .routes(routes!(api::readyz))
        .routes(routes!(metrics::metrics))
}

/// The OpenAPI 3.1 document the server publishes at `/v1/openapi.json`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    routes().split_for_parts().1
}
