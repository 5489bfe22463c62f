//! Deserialization helpers shared by the format types: the "string or map" shorthand, and
//! [`serde_true`], the default of a flag that is on unless written off.
//!
//! Written as visitors rather than `#[serde(untagged)]` so that a mistake inside the map form
//! reports the real problem (an unknown key, a wrong type) instead of "did not match any
//! variant".

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

/// Deserializes either a plain string (turned into `T` by `from_str`) or a map (deserialized
/// as `M` and turned into `T` by `from_map`).
pub(crate) fn string_or_map<'de, D, T, M, FS, FM>(
    d: D,
    expecting: &'static str,
    from_str: FS,
    from_map: FM,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    M: Deserialize<'de>,
    FS: FnOnce(String) -> T,
    FM: FnOnce(M) -> T,
{
    struct V<T, M, FS, FM> {
        expecting: &'static str,
        from_str: FS,
        from_map: FM,
        _p: PhantomData<(T, M)>,
    }
    impl<'de, T, M, FS, FM> Visitor<'de> for V<T, M, FS, FM>
    where
        M: Deserialize<'de>,
        FS: FnOnce(String) -> T,
        FM: FnOnce(M) -> T,
    {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            Ok((self.from_str)(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<T, E> {
            Ok((self.from_str)(v))
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            let m = M::deserialize(de::value::MapAccessDeserializer::new(map))?;
            Ok((self.from_map)(m))
        }
    }
    d.deserialize_any(V {
        expecting,
        from_str,
        from_map,
        _p: PhantomData,
    })
}

/// A `schemars` transform for types that also accept a plain-string shorthand: the generated
/// object schema becomes `anyOf: [string, object]`.
pub(crate) fn allow_string_shorthand(schema: &mut schemars::Schema) {
    let original = std::mem::take(schema);
    *schema = schemars::json_schema!({
        "anyOf": [ { "type": "string" }, original ]
    });
}

/// `true`, for `#[serde(default = ...)]` on flags that are on unless written off.
pub(crate) fn serde_true() -> bool {
    true
}
