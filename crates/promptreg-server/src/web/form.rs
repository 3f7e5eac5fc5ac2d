//! Posted forms: their fields, size limits, and the CSRF check.

use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;

use super::csrf;
use super::page::{PageError, visitor};

/// The largest text one form field may hold (a prompt file): 256 KiB.
pub(crate) const MAX_FIELD: usize = 256 * 1024;

/// The fields of a posted form, in order.
pub(crate) struct Fields(Vec<(String, String)>);

impl Fields {
    /// The first value of `name`, or `""`.
    pub(crate) fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// Every value of `name`, in order (checkboxes).
    pub(crate) fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every field whose name starts with `prefix`, the prefix removed.
    pub(crate) fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.0
            .iter()
            .filter_map(move |(k, v)| Some((k.strip_prefix(prefix)?, v.as_str())))
    }

    /// Refuses (403) a form whose `csrf` field is not the session's token.
    pub(crate) fn check_csrf(&self) -> Result<(), PageError> {
        let expected = visitor().map(|v| v.csrf).unwrap_or_default();
        if csrf::matches(&expected, self.get("csrf")) {
            return Ok(());
        }
        Err(PageError::new(
            StatusCode::FORBIDDEN,
            "The form expired or did not come from this site (its CSRF token does not match): reload the page and try again",
        ))
    }

    /// Refuses (413) a field longer than [`MAX_FIELD`], naming it.
    pub(crate) fn check_sizes(&self) -> Result<(), PageError> {
        match self.0.iter().find(|(_, v)| v.len() > MAX_FIELD) {
            Some((name, value)) => Err(too_large(name, value.len())),
            None => Ok(()),
        }
    }
}

/// 413, naming the field and the limit.
pub(crate) fn too_large(name: &str, len: usize) -> PageError {
    let name = name.strip_prefix("file:").unwrap_or(name);
    PageError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "`{name}` is too large: {} KiB, the limit is {} KiB per field",
            len.div_ceil(1024),
            MAX_FIELD / 1024
        ),
    )
}

impl<S: Send + Sync> FromRequest<S> for Fields {
    type Rejection = PageError;

    async fn from_request(request: Request, state: &S) -> Result<Fields, PageError> {
        match axum::Form::<Vec<(String, String)>>::from_request(request, state).await {
            Ok(axum::Form(fields)) => Ok(Fields(fields)),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(PageError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "The form is larger than the server accepts: shorten the text and try again",
            )),
            Err(e) => Err(PageError::new(
                StatusCode::BAD_REQUEST,
                format!("The form cannot be read: {}", e.body_text()),
            )),
        }
    }
}
