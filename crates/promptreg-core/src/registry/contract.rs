//! A registry's contracts: a locale's translation of a prompt's tools, and
//! a render as the request body of a model provider.

use std::any::Any;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::contract::Contract;
use crate::error::{Error, ErrorKind};
use crate::id::PromptId;
use crate::locale::IntoLocale;
use crate::provider::Provider;
use crate::rendering::RenderRequest;

use super::PromptRegistry;

impl PromptRegistry {
    /// Gives `id` its own contract for `locale` and the locales that match
    /// it, as [`set_model_settings`](Self::set_model_settings) does for
    /// model settings: a translation of its tools' and output schema's
    /// descriptions. Names and schemas are the default's; a contract that
    /// changes them is refused, since the application's handlers do not
    /// change with the locale.
    ///
    /// ```
    /// use promptreg_core::{Contract, JsonObject, Prompt, PromptRegistry, Tool};
    /// use serde_json::json;
    ///
    /// let params = JsonObject::from_value(json!({ "type": "object" })).unwrap();
    /// let open = Tool::new("open_page", "Open a page.", params);
    /// let registry = PromptRegistry::new();
    /// registry.register("narrator", Prompt::new("Guide.").with_contract(Contract::new(vec![open.clone()], None)?))?;
    /// registry.set_contract("narrator", "ja", Contract::new(vec![open.with_description("ページを開きます。")], None)?)?;
    ///
    /// let ja = registry.snapshot().contract("narrator", "ja-JP")?.unwrap();
    /// assert_eq!(ja.tools()[0].description(), "ページを開きます。");
    ///
    /// let renamed = Contract::new(vec![Tool::new("open", "Open.", open.parameters().clone())], None)?;
    /// assert!(registry.set_contract("narrator", "fr", renamed).is_err());
    /// # Ok::<(), promptreg_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidId`], [`ErrorKind::InvalidLocale`];
    /// [`ErrorKind::InvalidContract`] when the default has a contract and
    /// this one differs from it in more than descriptions.
    pub fn set_contract(
        &self,
        id: &str,
        locale: impl IntoLocale,
        contract: Contract,
    ) -> Result<(), Error> {
        let id = PromptId::new(id)?;
        let locale = locale.into_locale()?;
        let contract = Arc::new(contract);
        self.try_update(|s| {
            let default = s.default_contract(&id);
            if let Some(default) = default
                && let Some(change) = default.change_beyond_descriptions(&contract)
            {
                return Err(Error::new(
                    ErrorKind::InvalidContract,
                    format!("the `{locale}` contract of `{id}` {change}: a locale may only translate descriptions"),
                )
                .with_id(id.as_str())
                .with_suggestion("keep the default's names and schemas, and translate the descriptions"));
            }
            s.set_contract(id.clone(), locale.clone(), Arc::clone(&contract));
            Ok(())
        })
    }

    /// The body of a request to `provider` for `request`: its messages,
    /// model settings and contract in the provider's shape
    /// ([`Snapshot::provider_request`](crate::Snapshot::provider_request)),
    /// from the state the request's subject is served.
    ///
    /// # Errors
    ///
    /// As [`Snapshot::provider_request`](crate::Snapshot::provider_request).
    pub fn provider_request<C: Serialize + Any>(
        &self,
        request: &RenderRequest<'_, C>,
        provider: Provider,
    ) -> Result<Value, Error> {
        self.in_state_for(request.subject, |state| {
            state.provider_request(request, provider)
        })
    }

    /// [`provider_request`](Self::provider_request)'s body as JSON text
    /// ([`Snapshot::provider_request_json`](crate::Snapshot::provider_request_json)).
    ///
    /// # Errors
    ///
    /// As [`Snapshot::provider_request`](crate::Snapshot::provider_request).
    pub fn provider_request_json<C: Serialize + Any>(
        &self,
        request: &RenderRequest<'_, C>,
        provider: Provider,
    ) -> Result<String, Error> {
        self.in_state_for(request.subject, |state| {
            state.provider_request_json(request, provider)
        })
    }
}
