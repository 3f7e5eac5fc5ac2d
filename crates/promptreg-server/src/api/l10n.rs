//! Translations of a stored pack at `latest`: coverage per locale, the
//! pack's text for one locale as an XLIFF or PO file, and a translated
//! file written back as new versions of the variants it changes.

use std::path::Path as FsPath;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use promptreg::Locale;
use promptreg::l10n::{Catalog, Format, Status};
use promptreg_store::{Change, Label, PackFiles, Scope};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::body::{Imported, IncompletePrompt, TranslationImport, TranslationStatus};
use crate::extract::{JsonBody, PackName, Path, Query};
use crate::problem::{Problem, ProblemCode, ProblemDetails};
use crate::state::AppState;

/// The locales to report on.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusQuery {
    /// One locale (a BCP-47 tag); without it, the manifest's
    /// `[l10n] locales` and every locale a variant is for.
    locale: Option<String>,
}

/// `GET /v1/packs/{pack}/l10n`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/l10n", tag = "translations",
    params(("pack" = String, Path, description = "The pack's name"), StatusQuery),
    responses(
        (status = 200, description = "Per locale, at `latest`: prompts with a current, stale or untracked translation, and what the others fall back to", body = TranslationStatus),
        (status = 400, description = "Invalid pack name or locale", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn status(
    State(state): State<AppState>,
    caller: Caller,
    Path(pack): Path<PackName>,
    Query(query): Query<StatusQuery>,
) -> Result<Json<TranslationStatus>, Problem> {
    let pack = pack.as_str();
    caller.require(pack, Scope::Read)?;
    let locales = match &query.locale {
        Some(tag) => vec![Locale::parse(tag)?],
        None => Vec::new(),
    };
    let view = state.cache.label(pack, &Label::latest()).await?;
    let renderer = view.renderer_in(&state.heavy).await?;
    let status = Status::of(&renderer.pack, &renderer.registry, &locales);
    Ok(Json(TranslationStatus::from(&status)))
}

/// The format of an export.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExportQuery {
    /// `xliff` (XLIFF 2.0) or `po` (gettext).
    #[param(inline, value_type = String, pattern = "^(xliff|po)$")]
    format: String,
}

/// `GET /v1/packs/{pack}/l10n/{locale}`.
#[utoipa::path(
    get, path = "/v1/packs/{pack}/l10n/{locale}", tag = "translations",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("locale" = String, Path, description = "The locale translated into"),
        ExportQuery,
    ),
    responses(
        (status = 200, description = "Every translatable text of the pack at `latest` with its translation into the locale and its state: XLIFF 2.0 or gettext PO, as `format` asks", content(
            (String = "application/xliff+xml"),
            (String = "text/x-gettext-translation"),
        )),
        (status = 400, description = "Invalid pack name, locale or format", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::PackRead,
        (status = 404, description = "No such pack", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn export(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, tag)): Path<(PackName, String)>,
    Query(query): Query<ExportQuery>,
) -> Result<Response, Problem> {
    let pack = pack.as_str();
    caller.require(pack, Scope::Read)?;
    let locale = Locale::parse(&tag)?;
    let format = match query.format.as_str() {
        "xliff" => Format::Xliff,
        "po" => Format::Po,
        _ => {
            return Err(Problem::bad_request(
                ProblemCode::InvalidQuery,
                "`format` is `xliff` or `po`",
            ));
        }
    };
    let view = state.cache.label(pack, &Label::latest()).await?;
    let renderer = view.renderer_in(&state.heavy).await?;
    let text = Catalog::of(&renderer.pack, &locale).write(format);
    let content_type = match format {
        Format::Xliff => "application/xliff+xml",
        Format::Po => "text/x-gettext-translation; charset=utf-8",
    };
    let disposition = format!(
        "attachment; filename=\"{pack}.{locale}.{}\"",
        format.extension()
    );
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&disposition)
                    .unwrap_or(HeaderValue::from_static("attachment")),
            ),
        ],
        text,
    )
        .into_response())
}

/// `POST /v1/packs/{pack}/l10n/{locale}`.
#[utoipa::path(
    post, path = "/v1/packs/{pack}/l10n/{locale}", tag = "translations",
    params(
        ("pack" = String, Path, description = "The pack's name"),
        ("locale" = String, Path, description = "The locale translated into"),
    ),
    request_body = TranslationImport,
    responses(
        (status = 200, description = "The variants written, each a new version recorded as translating its default's current text, and the prompts left as they were because they are not fully translated", body = Imported),
        (status = 400, description = "Malformed JSON, unknown fields, an invalid pack name or locale", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
        (status = 403, description = "The key cannot write to this pack", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "No such pack", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::JsonBodyErrors,
        (status = 422, description = "The file cannot be imported (`invalid-translation`: every problem, each naming its unit), or the pack with the variants would fail `check` (`invalid-pack`); nothing is written", body = ProblemDetails, content_type = "application/problem+json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn import(
    State(state): State<AppState>,
    caller: Caller,
    Path((pack, tag)): Path<(PackName, String)>,
    JsonBody(body): JsonBody<TranslationImport>,
) -> Result<Json<Imported>, Problem> {
    let pack = pack.as_str();
    caller.require(pack, Scope::Write)?;
    let locale = Locale::parse(&tag)?;
    let invalid = |err: promptreg::Error| {
        let mut problem = Problem::from(err);
        problem.set_code(
            StatusCode::UNPROCESSABLE_ENTITY,
            ProblemCode::InvalidTranslation,
        );
        problem
    };
    let catalog = Catalog::read(&body.file, FsPath::new("file")).map_err(invalid)?;
    let view = state.cache.label(pack, &Label::latest()).await?;
    let renderer = view.renderer_in(&state.heavy).await?;
    let stored = &renderer.pack;
    let mut files = state.store.checkout(pack, &Label::latest()).await?;
    let relative = |path: &FsPath| -> String {
        let path = path.strip_prefix(stored.root()).unwrap_or(path);
        path.to_string_lossy().replace('\\', "/")
    };
    let imported = catalog
        .import(stored, &locale, |path| {
            let bytes = files.get(&relative(path))?;
            String::from_utf8(bytes.to_vec()).ok()
        })
        .map_err(invalid)?;
    let written: Vec<String> = imported.files.iter().map(|(p, _)| relative(p)).collect();
    for ((_, text), path) in imported.files.iter().zip(&written) {
        files.insert(path.clone(), text.as_bytes());
    }
    let incomplete = imported
        .incomplete
        .iter()
        .map(|(id, units)| IncompletePrompt {
            prompt: id.to_string(),
            units: units.clone(),
        })
        .collect();
    let mut versions = std::collections::BTreeMap::new();
    if !written.is_empty() {
        let message = match body.message.trim() {
            "" => format!("Translations for {locale}"),
            message => message.to_owned(),
        };
        let files: PackFiles = files;
        let _slot = state.heavy.slot().await?;
        let report = state.store.push(&files, &caller.actor(), &message).await?;
        state.cache.invalidate(pack);
        for (prompt, change, version) in report.prompts {
            if let (Change::Added | Change::Changed | Change::Restored, Some(v)) = (change, version)
            {
                versions.insert(prompt, v);
            }
        }
    }
    Ok(Json(Imported {
        pack: pack.to_owned(),
        locale: locale.to_string(),
        written,
        incomplete,
        versions,
        warnings: imported
            .warnings
            .iter()
            .map(|w| w.message.clone())
            .collect(),
    }))
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(export, import))
}
