//! Tools and output schemas: any JSON value as a tool's parameters or an
//! output schema, and any sample answer, loads or gives diagnostics, is
//! shaped for every provider, compared with another contract and checked
//! by a prompt test, never a panic.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use promptreg::contract::changes_between;
use promptreg::pack::Pack;
use promptreg::testing::PromptTests;
use promptreg::{PromptRegistry, Provider, RenderRequest};
use serde_json::{Map, Value, json};

/// A JSON value, its keys drawn mostly from JSON Schema's keywords so the
/// schema checks and the comparison get past the meta-schema.
#[derive(Debug, Arbitrary)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    List(Vec<Json>),
    Object(Vec<(Key, Json)>),
}

#[derive(Debug, Arbitrary)]
enum Key {
    Keyword(u8),
    Any(String),
}

const KEYWORDS: &[&str] = &[
    "type", "properties", "required", "items", "enum", "const", "additionalProperties",
    "$ref", "$defs", "anyOf", "oneOf", "allOf", "not", "minimum", "maximum", "pattern",
    "format", "description", "prefixItems", "patternProperties", "object", "string",
    "integer", "array", "a", "b",
];

impl Json {
    fn value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => json!(b),
            Json::Int(n) => json!(n),
            Json::Float(f) => json!(f),
            Json::Text(t) => json!(t),
            Json::List(items) => Value::Array(items.iter().map(Json::value).collect()),
            Json::Object(entries) => {
                let mut map = Map::new();
                for (key, value) in entries {
                    let key = match key {
                        Key::Keyword(i) => KEYWORDS[*i as usize % KEYWORDS.len()].to_owned(),
                        Key::Any(k) => k.clone(),
                    };
                    map.insert(key, value.value());
                }
                Value::Object(map)
            }
        }
    }
}

#[derive(Debug, Arbitrary)]
struct Input {
    tool_name: String,
    parameters: Json,
    output: Json,
    /// The contract an older version declared.
    older: Json,
    answer: Json,
    arguments: Json,
}

/// A prompt file declaring one tool of `parameters` and an output schema.
fn prompt_file(name: &str, parameters: &Value, output: &Value) -> String {
    let tools = json!([{ "name": name, "description": "d", "parameters": parameters }]);
    let output = json!({ "name": "o", "schema": output });
    // JSON is YAML: the front matter reads it as written.
    format!("---\ntools: {tools}\noutput: {output}\n---\nHello.\n")
}

const MANIFEST: &str = "name = \"fuzz\"\nkeys = [\"p\"]\n[user]\nprompts_dir = \".f\"\n";

fuzz_target!(|input: Input| {
    let (parameters, output) = (input.parameters.value(), input.output.value());
    let file = prompt_file(&input.tool_name, &parameters, &output);
    let older = prompt_file("open_page", &input.older.value(), &output);
    let ja = format!("---\ntools: {{\"{}\": {{\"description\": \"説明\"}}}}\n---\nこんにちは。\n", input.tool_name);
    let files = [
        ("promptreg.toml", MANIFEST),
        ("defaults/p.md", file.as_str()),
        ("defaults/p.ja.md", ja.as_str()),
    ];
    let Ok(pack) = Pack::from_files("fuzz", files) else {
        return;
    };
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let ctx = json!({});
    for locale in ["en", "ja"] {
        let request = RenderRequest::new("p", &ctx).locale_tag(locale).unwrap();
        for provider in Provider::ALL {
            let _ = registry.provider_request(&request, provider);
        }
    }
    let id = promptreg::PromptId::new("p").unwrap();
    let newer = promptreg::pack::declared_contract(&id, &file);
    let older = promptreg::pack::declared_contract(&id, &older);
    let _ = changes_between(older.as_ref(), newer.as_ref());
    let _ = changes_between(newer.as_ref(), older.as_ref());
    let case = json!({
        "name": "c",
        "answer": input.answer.value().to_string(),
        "tool_call": { "name": input.tool_name, "arguments": input.arguments.value().to_string() },
    });
    let tests = format!("prompt = \"p\"\n[[case]]\n{}", toml_case(&case));
    if let Ok(tests) = PromptTests::from_files(&pack, [("tests/p.toml", tests)]) {
        let _ = tests.run(&registry);
    }
});

/// The case as TOML keys: strings are JSON strings, which TOML reads alike
/// for the characters JSON escapes.
fn toml_case(case: &Value) -> String {
    let string = |v: &Value| serde_json::to_string(v.as_str().unwrap_or_default()).unwrap();
    format!(
        "name = \"c\"\nanswer = {}\ntool_call = {{ name = {}, arguments = {} }}\n",
        string(&case["answer"]),
        string(&case["tool_call"]["name"]),
        string(&case["tool_call"]["arguments"]),
    )
}
