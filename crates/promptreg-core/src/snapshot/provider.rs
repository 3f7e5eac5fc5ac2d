//! A render as the request body of a model provider: the messages, with
//! the model settings and the contract of the locale rendered.

use std::any::Any;

use serde::Serialize;
use serde_json::Value;

use crate::chat::Message;
use crate::contract::Contract;
use crate::error::Error;
use crate::json_object::JsonObject;
use crate::locale::Locale;
use crate::provider::Provider;
use crate::rendering::{Form, RenderRequest};

use super::Snapshot;

impl Snapshot {
    /// Renders `request` as messages (a text prompt is one `system`
    /// message) and returns the body of a request to `provider`: the
    /// messages, the model settings and the contract (tools and output
    /// schema) of the locale rendered, in the provider's shape
    /// ([`Provider::request`]). The request's form is not looked at.
    ///
    /// ```
    /// use promptreg_core::{Contract, JsonObject, Prompt, PromptRegistry, Provider, RenderRequest, Tool};
    /// use serde_json::json;
    ///
    /// let object = |v| JsonObject::from_value(v).unwrap();
    /// let registry = PromptRegistry::new();
    /// let open = Tool::new("open_page", "Open a page.", object(json!({ "type": "object" })));
    /// registry.register(
    ///     "narrator",
    ///     Prompt::new("Guide the visitor.")
    ///         .with_model(object(json!({ "model": "small", "max_tokens": 512 })))
    ///         .with_contract(Contract::new(vec![open], None)?),
    /// )?;
    ///
    /// let body = registry.snapshot().provider_request(&RenderRequest::new("narrator", &()), Provider::Anthropic)?;
    /// assert_eq!(body["system"], "Guide the visitor.");
    /// assert_eq!(body["max_tokens"], 512);
    /// assert_eq!(body["tools"][0]["name"], "open_page");
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`render_request`](Self::render_request) of [`Form::Messages`],
    /// and [`Provider::request`]'s.
    pub fn provider_request<C: Serialize + Any>(
        &self,
        request: &RenderRequest<'_, C>,
        provider: Provider,
    ) -> Result<Value, Error> {
        self.shaped_request(request, |messages, model, contract| {
            provider.request(messages, model, contract)
        })
    }

    /// [`provider_request`](Self::provider_request)'s body as JSON text
    /// ([`Provider::request_json`]): the contract's tools copied as the
    /// text kept with it, for a caller that sends the body on.
    ///
    /// # Errors
    ///
    /// As [`provider_request`](Self::provider_request).
    pub fn provider_request_json<C: Serialize + Any>(
        &self,
        request: &RenderRequest<'_, C>,
        provider: Provider,
    ) -> Result<String, Error> {
        self.shaped_request(request, |messages, model, contract| {
            provider.request_json(messages, model, contract)
        })
    }

    /// Renders `request` as messages and gives `shape` them, with the
    /// model settings and the contract of the locale rendered.
    fn shaped_request<C: Serialize + Any, T>(
        &self,
        request: &RenderRequest<'_, C>,
        shape: impl FnOnce(&[Message], Option<&JsonObject>, Option<&Contract>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let request = RenderRequest {
            locale: request.locale.clone(),
            form: Form::Messages,
            traced: false,
            ..*request
        };
        let messages = self.plain_request(&request)?.into_messages();
        let locale: &Locale = request.locale.as_deref().unwrap_or(&self.locale);
        let (_, entry) = self.lookup(request.id)?;
        let model = self.model_of(entry, locale);
        let contract = self.contract_of(entry, locale);
        shape(&messages, model, contract.map(|c| &**c)).map_err(|e| e.with_id(request.id))
    }
}
