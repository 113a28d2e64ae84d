//! JSON bodies of the admin API, read field by field: the body must be a
//! JSON object; a field the route does not define is `400 unknown_field`
//! (a typo such as `entitld` is never ignored); a field of the wrong type or
//! value is `400 invalid_field`, both naming the field in `param`.

use axum::body::Bytes;
use mds_domain::ErrorCode;
use serde_json::{Map, Value};

use super::problems;
use crate::error::ApiError;

/// A body being read.
pub struct Body {
    fields: Map<String, Value>,
}

impl Body {
    /// Parses `bytes` as a JSON object whose fields are all in `allowed`.
    pub fn parse(bytes: &Bytes, allowed: &[&str]) -> Result<Self, ApiError> {
        let invalid = |detail: String| ApiError::new(ErrorCode::InvalidBody, detail);
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| invalid(format!("the body is not valid JSON: {e}")))?;
        let Value::Object(fields) = value else { return Err(invalid("the body must be a JSON object".into())) };
        if let Some(unknown) = fields.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(problems::unknown_field(unknown, allowed));
        }
        Ok(Body { fields })
    }

    /// The first field of the body that is `null`, if any.
    pub fn first_null(&self) -> Option<&str> {
        self.fields.iter().find(|(_, v)| v.is_null()).map(|(k, _)| k.as_str())
    }

    /// Whether the body has `field` (`null` counts as absent).
    pub fn has(&self, field: &str) -> bool {
        self.fields.get(field).is_some_and(|v| !v.is_null())
    }

    /// A required string field parsed by `parse`.
    pub fn required<T>(&self, field: &str, parse: impl Fn(&str) -> Result<T, String>) -> Result<T, ApiError> {
        self.optional(field, parse)?.ok_or_else(|| problems::invalid_field(field, format!("{field} is required")))
    }

    /// An optional string field parsed by `parse`.
    pub fn optional<T>(&self, field: &str, parse: impl Fn(&str) -> Result<T, String>) -> Result<Option<T>, ApiError> {
        match self.fields.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => parse(s).map(Some).map_err(|e| problems::invalid_field(field, e)),
            Some(_) => Err(problems::invalid_field(field, format!("{field} must be a string"))),
        }
    }

    /// A required boolean field.
    pub fn required_bool(&self, field: &str) -> Result<bool, ApiError> {
        match self.fields.get(field) {
            Some(Value::Bool(b)) => Ok(*b),
            None | Some(Value::Null) => Err(problems::invalid_field(field, format!("{field} is required"))),
            Some(_) => Err(problems::invalid_field(field, format!("{field} must be true or false"))),
        }
    }

    /// A required integer field from `min` to `max`.
    pub fn required_int(&self, field: &str, min: u64, max: u64) -> Result<u64, ApiError> {
        let bad = || problems::invalid_field(field, format!("{field} must be an integer from {min} to {max}"));
        match self.fields.get(field) {
            None | Some(Value::Null) => Err(problems::invalid_field(field, format!("{field} is required"))),
            // JSON Schema's integers include `5.0`.
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| {
                    n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64).map(|f| f as u64)
                })
                .filter(|v| (min..=max).contains(v))
                .ok_or_else(bad),
            Some(_) => Err(bad()),
        }
    }

    /// An optional string field that `null` clears: `None` absent,
    /// `Some(None)` null, `Some(Some(s))` a string.
    pub fn nullable(&self, field: &str) -> Result<Option<Option<String>>, ApiError> {
        match self.fields.get(field) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(s)) => Ok(Some(Some(s.clone()))),
            Some(_) => Err(problems::invalid_field(field, format!("{field} must be a string or null"))),
        }
    }

    /// An optional list of strings.
    pub fn strings(&self, field: &str) -> Result<Option<Vec<String>>, ApiError> {
        let bad = || problems::invalid_field(field, format!("{field} must be a list of strings"));
        match self.fields.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => {
                items.iter().map(|v| v.as_str().map(str::to_owned).ok_or_else(bad)).collect::<Result<_, _>>().map(Some)
            }
            Some(_) => Err(bad()),
        }
    }

    /// An optional integer field from `min` to `max`.
    pub fn optional_int(&self, field: &str, min: u64, max: u64) -> Result<Option<u64>, ApiError> {
        if self.has(field) { self.required_int(field, min, max).map(Some) } else { Ok(None) }
    }
}
