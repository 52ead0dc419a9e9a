//! Members of JSON that staged wrote (a preview's details, a stored payload, undo data), read
//! through a typed view as forgivingly as the JSON may have drifted.
//!
//! A view is a `#[derive(Deserialize)]` struct of the members a reader needs, each of one of
//! these types, read with [`view`]: a member that is missing or of another type reads as
//! absent, as it would through `Value::get` and `Value::as_str`, and never fails the whole
//! view. So a reader names the members it needs in one type instead of reading keys by string,
//! and a preview a plugin gave odd details (`"diff": 1`) or a payload an older build wrote still
//! reads as "not there" rather than as an error.
//!
//! # Example
//! ```
//! use serde::Deserialize;
//! use staged_protocol::lenient::{Present, Text, Whole, view};
//!
//! #[derive(Default, Deserialize)]
//! #[serde(default)]
//! struct Header<'a> {
//!     #[serde(borrow)]
//!     tool: Text<'a>,
//!     version: Whole,
//!     ops: Present,
//! }
//!
//! let payload = serde_json::json!({"tool": "edit", "version": "2", "ops": null});
//! let header: Header = view(&payload).unwrap_or_default();
//! assert_eq!((header.tool.0, header.version.0, header.ops.0), (Some("edit"), None, true));
//! assert!(view::<Header>(&serde_json::json!(["edit"])).is_none());
//! ```
//!
//! [`Header`] is the view every reader of a stored payload or undo data starts with:
//! ```
//! use staged_protocol::lenient::{Header, Version};
//! let undo = serde_json::json!({"version": 2, "ops": []});
//! let header = Header::of(&undo);
//! assert_eq!(header.version, Version { present: true, number: Some(2) });
//! assert!(header.ops.0 && header.tool.0.is_none());
//! ```

use std::fmt;

use serde::{
    Deserialize, Deserializer,
    de::{IgnoredAny, MapAccess, SeqAccess, Visitor},
};
use serde_json::Value;

/// `T` read from the members of `value`; `None` when `value` is not an object (an array is not
/// read as a struct's fields in order) or a member `T` requires is not there.
pub fn view<'a, T: Deserialize<'a>>(value: &'a Value) -> Option<T> {
    T::deserialize(value.as_object()?).ok()
}

/// A string member borrowed from the JSON (`Value::as_str`); `None` for any other type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Text<'a>(pub Option<&'a str>);

/// A non-negative whole number member (`Value::as_u64`); `None` for any other type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Whole(pub Option<u64>);

/// A boolean member (`Value::as_bool`); `None` for any other type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flag(pub Option<bool>);

/// Whether the member is there at all, `null` included (`Value::get(..).is_some()`); with
/// `#[serde(default)]`, `false` when it is missing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Present(pub bool);

/// The strings of an array member, others skipped; empty when the member is not an array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Texts<'a>(pub Vec<&'a str>);

/// A member of type `T`, or `None` when it is of another shape (`T` read from a copy of it,
/// so `T` owns its data: for small members).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaped<T>(pub Option<T>);

impl<T> Default for Shaped<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Shaped<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(T::deserialize(Value::deserialize(d)?).ok()))
    }
}

/// An object member read as `T` in place (borrowing from the JSON), or `None` when the member
/// is not an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object<T>(pub Option<T>);

impl<T> Default for Object<T> {
    fn default() -> Self {
        Self(None)
    }
}

/// An array member, each item read as `T` (a lenient type, such as [`Object`]), or `None` when
/// the member is not an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Many<T>(pub Option<Vec<T>>);

impl<T> Default for Many<T> {
    fn default() -> Self {
        Self(None)
    }
}

/// A `version` member: whether it is there at all (`null` included), and its number when it
/// is a non-negative whole one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Version {
    /// The member is there.
    pub present: bool,
    /// Its number (`Value::as_u64`).
    pub number: Option<u64>,
}

/// The members by which a reader tells a stored payload or undo data for its own: the tool
/// that wrote it, its format's version, and whether it holds `ops` (the journal's changes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Header<'a> {
    /// `tool`.
    #[serde(borrow)]
    pub tool: Text<'a>,
    /// `version`.
    pub version: Version,
    /// Whether there is an `ops` member.
    pub ops: Present,
}

impl<'a> Header<'a> {
    /// The header of `value`; every member absent when it is not an object.
    pub fn of(value: &'a Value) -> Self {
        view(value).unwrap_or_default()
    }
}

/// One JSON value as a scalar a view may want, anything else read past.
enum Scalar<'de> {
    Str(&'de str),
    Whole(u64),
    Bool(bool),
    Other,
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(v))
    }
    /// A string that cannot be borrowed: views read a `&Value`, whose strings always can.
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Whole(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Other)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other)
    }
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(match Scalar::deserialize(d)? {
            Scalar::Str(text) => Some(text),
            _ => None,
        }))
    }
}

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(match Scalar::deserialize(d)? {
            Scalar::Whole(n) => Some(n),
            _ => None,
        }))
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let number = match Scalar::deserialize(d)? {
            Scalar::Whole(n) => Some(n),
            _ => None,
        };
        Ok(Self { present: true, number })
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(match Scalar::deserialize(d)? {
            Scalar::Bool(b) => Some(b),
            _ => None,
        }))
    }
}

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Self(true))
    }
}

/// The visitor of [`Object`] and [`Many`]: reads a map (`OBJECT`) or a sequence (not
/// `OBJECT`) as `T`, anything else as `None`.
struct Either<T, const OBJECT: bool>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>, const OBJECT: bool> Visitor<'de> for Either<T, OBJECT> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        if OBJECT {
            return T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some);
        }
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        if !OBJECT {
            return T::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(Some);
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Either::<T, true>(std::marker::PhantomData)).map(Self)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Many<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Either::<Vec<T>, false>(std::marker::PhantomData)).map(Self)
    }
}

struct TextsVisitor;

impl<'de> Visitor<'de> for TextsVisitor {
    type Value = Vec<&'de str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut texts = Vec::new();
        while let Some(item) = seq.next_element::<Scalar<'de>>()? {
            if let Scalar::Str(text) = item {
                texts.push(text);
            }
        }
        Ok(texts)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Vec::new())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Texts<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextsVisitor).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct All<'a> {
        #[serde(borrow)]
        text: Text<'a>,
        whole: Whole,
        flag: Flag,
        present: Present,
        #[serde(borrow)]
        texts: Texts<'a>,
        shaped: Shaped<Vec<Value>>,
        #[serde(borrow)]
        object: Object<Inner<'a>>,
        #[serde(borrow)]
        many: Many<Object<Inner<'a>>>,
    }

    #[derive(Debug, Default, PartialEq, Deserialize)]
    #[serde(default)]
    struct Inner<'a> {
        #[serde(borrow)]
        text: Text<'a>,
    }

    /// Each member reads as `Value::get` and `as_*` read it, for every JSON type.
    #[test]
    fn members_read_as_value_get_reads_them() {
        let values = [
            json!(null),
            json!(true),
            json!(3),
            json!(-3),
            json!(1.5),
            json!("s"),
            json!(["a", 1, "b", null]),
            json!({"a": 1}),
            json!({"text": "t", "a": [1]}),
            json!([{"text": "t"}, {"text": 1}, "s", {}]),
        ];
        for value in values {
            let object = json!({
                "text": value, "whole": value, "flag": value, "present": value, "texts": value,
                "shaped": value, "object": value, "many": value
            });
            let all: All = view(&object).expect("an object reads");
            assert_eq!(all.text.0, object.get("text").and_then(Value::as_str), "{value}");
            assert_eq!(all.whole.0, object.get("whole").and_then(Value::as_u64), "{value}");
            assert_eq!(all.flag.0, object.get("flag").and_then(Value::as_bool), "{value}");
            assert!(all.present.0, "{value}");
            let texts: Vec<&str> = object
                .get("texts")
                .and_then(Value::as_array)
                .map(|items| items.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            assert_eq!(all.texts.0, texts, "{value}");
            assert_eq!(all.shaped.0.as_ref(), object.get("shaped").and_then(Value::as_array));
            fn inner(v: &Value) -> Option<Option<&str>> {
                v.as_object().map(|o| o.get("text").and_then(Value::as_str))
            }
            fn read<'a>(o: &Object<Inner<'a>>) -> Option<Option<&'a str>> {
                o.0.as_ref().map(|inner| inner.text.0)
            }
            assert_eq!(read(&all.object), inner(&value), "{value}");
            let many = all.many.0.map(|items| items.iter().map(read).collect::<Vec<_>>());
            let items = value.as_array().map(|items| items.iter().map(inner).collect::<Vec<_>>());
            assert_eq!(many, items, "{value}");
        }
        let empty = json!({});
        let none: All = view(&empty).expect("an object reads");
        assert_eq!(
            (none.text.0, none.whole.0, none.flag.0, none.present.0),
            (None, None, None, false)
        );
        assert!(none.texts.0.is_empty());
        for not_object in [json!(null), json!(["s", 1]), json!("s")] {
            assert!(view::<All>(&not_object).is_none(), "{not_object}");
            assert_eq!(Header::of(&not_object), Header::default());
        }
    }

    /// A header reads `tool`, `version` and `ops` as `Value::get` reads them.
    #[test]
    fn a_header_reads_as_value_get_reads() {
        for value in [json!(null), json!(2), json!("2"), json!(-1), json!("edit"), json!([1])] {
            let object = json!({"tool": value, "version": value, "ops": value});
            let header = Header::of(&object);
            assert_eq!(header.tool.0, object.get("tool").and_then(Value::as_str), "{value}");
            assert_eq!(header.version.number, object.get("version").and_then(Value::as_u64));
            assert!(header.version.present && header.ops.0, "{value}");
        }
        let other = json!({"other": 1});
        let header = Header::of(&other);
        assert!(!header.version.present && !header.ops.0 && header.tool.0.is_none());
    }
}
