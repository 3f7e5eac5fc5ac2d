//! The OpenAPI 3.1 document, generated from the handlers' annotations: the
//! router is built from the same list, so a route cannot miss from it.

use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::state::AppState;
use crate::{api, events, metrics};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "promptreg",
        description = "Prompts by pack, version and label, with conditional requests and a live stream of changes. \
            Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`."
    ),
    modifiers(&BearerKeys),
    components(schemas(crate::problem::ProblemDetails, crate::problem::ProblemCode)),
    tags(
        (name = "packs", description = "Packs, their prompts, and whole labels as bundles"),
        (name = "prompts", description = "Versions of a prompt"),
        (name = "labels", description = "Moving labels: If-Match, rollback, release, history"),
        (name = "fleet", description = "What every instance following a label serves"),
        (name = "render", description = "Rendering on the server"),
        (name = "translations", description = "Coverage per locale, and the pack's text in XLIFF and PO files, imported back"),
        (name = "events", description = "The change stream"),
        (name = "webhooks", description = "Changes sent to other systems, signed by the Standard Webhooks scheme; delivery logs"),
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

/// A pack name or prompt id: ASCII letters, digits, `.`, `_` and `-`,
/// starting with a letter or digit, never `..` (see `PromptId`).
const NAME_PATTERN: &str = r"^[A-Za-z0-9](?:[A-Za-z0-9_-]|\.[A-Za-z0-9_-])*\.?$";
/// A prompt id, or `@pack` (the manifest).
const ENTRY_PATTERN: &str = r"^(?:@pack|[A-Za-z0-9](?:[A-Za-z0-9_-]|\.[A-Za-z0-9_-])*\.?)$";
/// A label: lowercase letters, digits and `-`, starting with a letter or
/// digit (see `Label`).
const LABEL_PATTERN: &str = r"^[a-z0-9][a-z0-9-]*$";

/// The rules of names in URLs, in the document: the handlers take every
/// `pack`, `id` and `label` as a string and check it before any lookup;
/// the patterns tell clients (and schema-driven testers) which strings
/// pass.
struct NameRules;

impl Modify for NameRules {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                constrain_names(operation);
            }
        }
    }
}

fn constrain_names(operation: &mut Operation) {
    for parameter in operation.parameters.iter_mut().flatten() {
        let rule = match (parameter.name.as_str(), &parameter.parameter_in) {
            ("pack", ParameterIn::Path) => Some((NAME_PATTERN, promptreg::MAX_ID_LEN)),
            ("id", ParameterIn::Path) => Some((ENTRY_PATTERN, promptreg::MAX_ID_LEN)),
            ("label", ParameterIn::Path | ParameterIn::Query) => Some((LABEL_PATTERN, 64)),
            _ => None,
        };
        if (parameter.name.as_str(), &parameter.parameter_in) == ("version", &ParameterIn::Query) {
            // Versions are numbered from 1.
            parameter.schema = Some(RefOr::T(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1))
                    .build(),
            )));
        }
        if let Some((pattern, max_length)) = rule {
            parameter.schema = Some(RefOr::T(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some(pattern))
                    .max_length(Some(max_length))
                    .build(),
            )));
        }
    }
}

/// Every documented route.
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    let mut routes = every_route();
    // After the routes: the document's own modifiers run before any path is in it.
    NameRules.modify(routes.get_openapi_mut());
    routes
}

fn every_route() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(api::routes())
        .routes(routes!(events::stream::stream))
        .routes(routes!(metrics::metrics))
}

/// The OpenAPI 3.1 document the server publishes at `/v1/openapi.json`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    routes().split_for_parts().1
}
