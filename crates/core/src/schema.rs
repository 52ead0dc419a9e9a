//! [`parameters_schema`]: a tool's parameter schema derived from its typed arguments
//! (schemars), in the flat form clients accept.

use serde_json::Value;

/// The JSON Schema of `T` as a tool's parameters are declared: subschemas inlined (no `$ref`
/// or `$defs`), no `$schema`, root `title` or `description` (the tool has its own), no
/// `"default": null` for an optional field, no integer `format`, no `"additionalProperties":
/// true`, no empty `description`, and
/// an enum of documented unit variants as a plain `enum` of its names.
pub fn parameters_schema<T: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.remove("description");
    }
    tidy(&mut schema);
    schema
}

/// Tidies the schema object `schema` and every subschema in it.
fn tidy(schema: &mut Value) {
    let Value::Object(object) = schema else { return };
    if object.get("default").is_some_and(Value::is_null) {
        object.remove("default");
    }
    if object.get("type").is_some_and(|t| t == "integer") {
        object.remove("format");
    }
    // `true` says what an absent `additionalProperties` says.
    if object.get("additionalProperties").is_some_and(|a| a == true) {
        object.remove("additionalProperties");
    }
    if object.get("description").is_some_and(|d| d == "") {
        object.remove("description");
    }
    collapse_string_consts(object);
    for (key, value) in object.iter_mut() {
        match (key.as_str(), value) {
            // Maps of property name to subschema.
            ("properties" | "patternProperties", Value::Object(props)) => {
                props.values_mut().for_each(tidy);
            }
            ("items" | "additionalProperties" | "not", sub @ Value::Object(_)) => tidy(sub),
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(subs)) => {
                subs.iter_mut().for_each(tidy);
            }
            _ => {}
        }
    }
}

/// `{"oneOf": [{"type": "string", "const": "a", "description": …}, …]}` (what schemars makes of
/// an enum whose unit variants have doc comments) as `{"type": "string", "enum": ["a", …]}`.
fn collapse_string_consts(object: &mut serde_json::Map<String, Value>) {
    let Some(Value::Array(variants)) = object.get("oneOf") else { return };
    let names: Option<Vec<Value>> = variants
        .iter()
        .map(|variant| {
            let only_const = variant.as_object().is_some_and(|v| {
                v.keys().all(|k| matches!(k.as_str(), "type" | "const" | "description"))
                    && v.get("type").is_none_or(|t| t == "string")
            });
            variant.get("const").filter(|c| only_const && c.is_string()).cloned()
        })
        .collect();
    if let Some(names) = names {
        object.remove("oneOf");
        object.insert("type".to_owned(), Value::from("string"));
        object.insert("enum".to_owned(), Value::Array(names));
    }
}
