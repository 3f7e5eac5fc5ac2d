//! [`Contract`]: what an agent may call and the shape its answer must
//! take, beside its instructions: the [`Tool`]s a prompt offers and its
//! [`OutputSchema`], each described by a JSON Schema.
//!
//! The core carries a contract as data and shapes it for a provider
//! ([`crate::provider`]); whether a schema is a valid JSON Schema is
//! checked where it is read (a pack's loader), before it reaches a
//! registry.

use std::sync::{Arc, OnceLock};

mod change;

pub use change::{ContractChange, changes_between};

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::json_object::JsonObject;
use crate::provenance::Provenance;
use crate::provider::{Provider, Shaped};

/// A tool the model may call: a name, what it does, and its parameters as
/// a JSON Schema of an object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tool {
    name: Arc<str>,
    description: Arc<str>,
    parameters: JsonObject,
    /// The file that declares it, when other than the prompt's (a pack's
    /// shared `tools/open_page.yaml`): where it came from, not what it
    /// is, so neither its JSON nor the contract's digest holds it.
    #[serde(skip)]
    origin: Option<Arc<str>>,
}

impl Tool {
    /// A tool named `name`, described by `description`, whose arguments
    /// `parameters` (a JSON Schema) describes.
    pub fn new(
        name: impl Into<Arc<str>>,
        description: impl Into<Arc<str>>,
        parameters: JsonObject,
    ) -> Tool {
        Tool {
            name: name.into(),
            description: description.into(),
            parameters,
            origin: None,
        }
    }

    /// The same tool, declared in the file `origin` (a pack's shared
    /// `tools/open_page.yaml`), not in the prompt's own.
    pub fn with_origin(mut self, origin: impl Into<Arc<str>>) -> Tool {
        self.origin = Some(origin.into());
        self
    }

    /// The file that declares it, when other than the prompt's.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// Its name, as the model calls it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it does, for the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema of its arguments.
    pub fn parameters(&self) -> &JsonObject {
        &self.parameters
    }

    /// The same tool described by `description`: a translation.
    pub fn with_description(&self, description: impl Into<Arc<str>>) -> Tool {
        Tool {
            description: description.into(),
            ..self.clone()
        }
    }

    /// The same tool, its parameters `parameters`: a translation of their
    /// descriptions.
    pub fn with_parameters(&self, parameters: JsonObject) -> Tool {
        Tool {
            parameters,
            ..self.clone()
        }
    }
}

/// The shape the model's answer must take: a JSON Schema, with the name
/// and description providers ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutputSchema {
    name: Arc<str>,
    description: Option<Arc<str>>,
    schema: JsonObject,
    /// The file that declares the schema, when other than the prompt's (a
    /// pack's shared `schemas/audit_verdict.yaml`), not in its JSON.
    #[serde(skip)]
    origin: Option<Arc<str>>,
}

impl OutputSchema {
    /// The schema `schema`, named `name`.
    pub fn new(name: impl Into<Arc<str>>, schema: JsonObject) -> OutputSchema {
        OutputSchema {
            name: name.into(),
            description: None,
            schema,
            origin: None,
        }
    }

    /// The same schema, declared in the file `origin` (a pack's shared
    /// `schemas/audit_verdict.yaml`), not in the prompt's own.
    pub fn with_origin(mut self, origin: impl Into<Arc<str>>) -> OutputSchema {
        self.origin = Some(origin.into());
        self
    }

    /// The file that declares the schema, when other than the prompt's.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// The same schema, described by `description`.
    pub fn with_description(mut self, description: impl Into<Arc<str>>) -> OutputSchema {
        self.description = Some(description.into());
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same output schema, its schema `schema`: a translation of its
    /// descriptions.
    pub fn with_schema(&self, schema: JsonObject) -> OutputSchema {
        OutputSchema {
            schema,
            ..self.clone()
        }
    }

    /// What the answer is, for the model.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The JSON Schema the answer must validate against.
    pub fn schema(&self) -> &JsonObject {
        &self.schema
    }
}

/// What a prompt's model may call and must answer: its tools, in order,
/// and its output schema.
///
/// ```
/// use promptreg_core::{Contract, JsonObject, OutputSchema, Tool};
/// use serde_json::json;
///
/// let object = |v| JsonObject::from_value(v).unwrap();
/// let contract = Contract::new(
///     vec![Tool::new("open_page", "Open a page of the site.", object(json!({
///         "type": "object",
///         "properties": { "path": { "type": "string" } },
///         "required": ["path"],
///     })))],
///     Some(OutputSchema::new("verdict", object(json!({ "type": "object" })))),
/// )?;
/// assert_eq!(contract.tool("open_page").unwrap().description(), "Open a page of the site.");
///
/// // Two tools of one name are refused.
/// let twice = Contract::new(vec![contract.tools()[0].clone(), contract.tools()[0].clone()], None);
/// assert!(twice.is_err());
/// # Ok::<(), promptreg_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Contract {
    tools: Vec<Tool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<OutputSchema>,
    /// Where the source that declared it says it came from (a pack file).
    #[serde(skip)]
    provenance: Option<Arc<Provenance>>,
    /// Its tools and output schema in each provider's shape, built the
    /// first time a render asks: a contract is built once per load, so a
    /// render copies them rather than rebuilding them.
    #[serde(skip)]
    shaped: ShapedCache,
    /// [`digest`](Self::digest), computed the first time it is asked for
    /// (every traced render asks).
    #[serde(skip)]
    digest: DigestCache,
}

/// A contract's digest, computed once.
#[derive(Debug, Clone, Default)]
struct DigestCache(OnceLock<String>);

/// A cache is not part of what a contract is.
impl PartialEq for DigestCache {
    fn eq(&self, _: &DigestCache) -> bool {
        true
    }
}

impl Eq for DigestCache {}

/// One [`Shaped`] per provider, each built once.
#[derive(Debug, Clone, Default)]
struct ShapedCache([OnceLock<Shaped>; 4]);

/// A cache is not part of what a contract is.
impl PartialEq for ShapedCache {
    fn eq(&self, _: &ShapedCache) -> bool {
        true
    }
}

impl Eq for ShapedCache {}

impl Contract {
    /// A contract of `tools` and `output`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidContract`] when a name is empty or two tools share
    /// one.
    pub fn new(tools: Vec<Tool>, output: Option<OutputSchema>) -> Result<Contract, Error> {
        for (i, tool) in tools.iter().enumerate() {
            if tool.name.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidContract,
                    "a tool has an empty name",
                ));
            }
            if tools[..i].iter().any(|t| t.name == tool.name) {
                return Err(Error::new(
                    ErrorKind::InvalidContract,
                    format!(
                        "two tools are named `{}`: tool names must be unique",
                        tool.name
                    ),
                )
                .with_suggestion("rename one of them"));
            }
        }
        if output.as_ref().is_some_and(|o| o.name.is_empty()) {
            return Err(Error::new(
                ErrorKind::InvalidContract,
                "the output schema has an empty name",
            ));
        }
        Ok(Contract {
            tools,
            output,
            provenance: None,
            shaped: ShapedCache::default(),
            digest: DigestCache::default(),
        })
    }

    /// Where the source that declared it says it came from (a pack file),
    /// for `explain`.
    pub fn with_provenance(mut self, provenance: Arc<Provenance>) -> Contract {
        self.provenance = Some(provenance);
        self
    }

    /// Where it came from, when its source said.
    pub fn provenance(&self) -> Option<&Arc<Provenance>> {
        self.provenance.as_ref()
    }

    /// A digest of what it declares (its tools and output schema, not
    /// where they came from): 16 hex digits of XXH3-64 over its JSON, the
    /// same for the same contract in every process. Trace attributes carry
    /// it ([`crate::trace_attributes::CONTRACT_DIGEST`]), so an answer
    /// traces to the tools and schema it was given.
    pub fn digest(&self) -> String {
        self.digest
            .0
            .get_or_init(|| {
                let json = serde_json::to_vec(self).unwrap_or_default();
                format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&json))
            })
            .clone()
    }

    /// Its tools and output schema in `provider`'s shape.
    pub(crate) fn shaped(&self, provider: Provider) -> &Shaped {
        let index = Provider::ALL
            .iter()
            .position(|p| *p == provider)
            .unwrap_or(0);
        self.shaped.0[index].get_or_init(|| provider.shape(self))
    }

    /// The tools, in the order declared.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// The output schema, if the answer has one.
    pub fn output(&self) -> Option<&OutputSchema> {
        self.output.as_ref()
    }

    /// Whether it declares nothing.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.output.is_none()
    }

    /// What `other` changes beyond descriptions, as words (``renames tool
    /// `a` to `b` ``); `None` when it only translates them: what a locale's
    /// contract may do.
    pub fn change_beyond_descriptions(&self, other: &Contract) -> Option<String> {
        let names = |c: &Contract| {
            c.tools
                .iter()
                .map(|t| t.name.to_string())
                .collect::<Vec<_>>()
        };
        if names(self) != names(other) {
            return Some(format!(
                "declares the tools [{}] where the default declares [{}]",
                names(other).join(", "),
                names(self).join(", ")
            ));
        }
        if let Some(tool) = self.tools.iter().zip(&other.tools).find_map(|(a, b)| {
            (!same_but_descriptions(&a.parameters, &b.parameters)).then_some(&a.name)
        }) {
            return Some(format!("changes the parameters of tool `{tool}`"));
        }
        match (&self.output, &other.output) {
            (None, None) => None,
            (Some(_), None) => Some("drops the output schema".to_owned()),
            (None, Some(_)) => Some("adds an output schema".to_owned()),
            (Some(a), Some(b)) if a.name != b.name => Some(format!(
                "renames the output schema `{}` to `{}`",
                a.name, b.name
            )),
            (Some(a), Some(b)) if !same_but_descriptions(&a.schema, &b.schema) => {
                Some("changes the output schema".to_owned())
            }
            _ => None,
        }
    }
}

/// Whether two schemas are the same but for their `description`s.
fn same_but_descriptions(a: &JsonObject, b: &JsonObject) -> bool {
    a == b || without_descriptions(a.to_value()) == without_descriptions(b.to_value())
}

/// `schema` without its `description` keywords. The keys of a map of
/// schemas by name (`properties`, `$defs`, ...) are names, not keywords: a
/// property named `description` stays.
fn without_descriptions(schema: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    const MAPS: [&str; 5] = [
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    ];
    match schema {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(key, value)| key != "description" || !value.is_string())
                .map(|(key, value)| match (MAPS.contains(&key.as_str()), value) {
                    (true, Value::Object(schemas)) => {
                        let schemas = schemas
                            .into_iter()
                            .map(|(name, s)| (name, without_descriptions(s)));
                        (key, Value::Object(schemas.collect()))
                    }
                    (_, value) => (key, without_descriptions(value)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_descriptions).collect()),
        other => other,
    }
}
