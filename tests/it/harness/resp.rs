//! Reading generic RESP replies (COMMAND INFO / DOCS and the like).

use redis::Value;

/// A reply element as text (bulk or status strings, integers).
pub fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Okay => "OK".into(),
        Value::Int(i) => i.to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

pub fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) | Value::Set(a) => a,
        other => panic!("not an array: {other:?}"),
    }
}

/// A RESP2 flat `[k1, v1, k2, v2...]` array (or a RESP3 map) as pairs.
pub fn pairs(v: &Value) -> Vec<(String, Value)> {
    match v {
        Value::Map(m) => m.iter().map(|(k, v)| (text(k), v.clone())).collect(),
        _ => items(v)
            .chunks(2)
            .map(|kv| (text(&kv[0]), kv[1].clone()))
            .collect(),
    }
}

pub fn field(v: &Value, name: &str) -> Value {
    pairs(v)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no field {name} in {v:?}"))
}
