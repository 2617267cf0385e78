//! Java arguments into bridge arguments, bridge results into Java values.

use crate::boundary::Res;
use cursus_bridge::error::invalid;
use cursus_bridge::registry::{self, Handle};
use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::sys::{jbyteArray, jint, jlong, jobjectArray, jstring};
use jni::JNIEnv;
use std::sync::Arc;

/// The object behind a handle argument.
pub(crate) fn handle<T: Handle>(id: jlong) -> Res<Arc<T>> {
    Ok(registry::get(id as u64)?)
}

/// A required string (null is an `invalid_argument` error).
pub(crate) fn string(env: &mut JNIEnv, s: &JString, name: &str) -> Res<String> {
    opt_string(env, s)?.ok_or_else(|| invalid(format!("argument {name} is null")).into())
}

/// An optional string (null: none).
///
/// Uses `get_string_unchecked`: the checked `get_string` of the `jni` crate
/// looks `java.lang.String` up by name (`FindClass`) on every call, which
/// was a tenth of a `send`'s cost.
pub(crate) fn opt_string(env: &mut JNIEnv, s: &JString) -> Res<Option<String>> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: every `JString` this crate converts is a parameter of a native
    // method declared with a `java.lang.String` type (the generated
    // `NativeBridge` and the hand-written declarations), or an element the
    // `strings` below read from a `String[]`: the JVM guarantees the object
    // is a `java.lang.String` (or null, handled above).
    Ok(Some(unsafe { env.get_string_unchecked(s) }?.into()))
}

/// A required byte array (null is an `invalid_argument` error).
pub(crate) fn bytes(env: &mut JNIEnv, b: &JByteArray, name: &str) -> Res<Vec<u8>> {
    opt_bytes(env, b)?.ok_or_else(|| invalid(format!("argument {name} is null")).into())
}

/// An optional byte array (null: none).
pub(crate) fn opt_bytes(env: &mut JNIEnv, b: &JByteArray) -> Res<Option<Vec<u8>>> {
    if b.is_null() {
        return Ok(None);
    }
    Ok(Some(env.convert_byte_array(b)?))
}

/// A non-negative `int` as `u32`.
pub(crate) fn u32_arg(name: &str, v: jint) -> Res<u32> {
    u32::try_from(v).map_err(|_| invalid(format!("{name} must not be negative, got {v}")).into())
}

/// A non-negative `long` as `u64`.
pub(crate) fn u64_arg(name: &str, v: jlong) -> Res<u64> {
    u64::try_from(v).map_err(|_| invalid(format!("{name} must not be negative, got {v}")).into())
}

/// A non-negative `int` index.
pub(crate) fn usize_arg(name: &str, v: jint) -> Res<usize> {
    usize::try_from(v).map_err(|_| invalid(format!("{name} must not be negative, got {v}")).into())
}

/// A `String[]` (null elements are refused).
pub(crate) fn strings(env: &mut JNIEnv, array: &JObjectArray, name: &str) -> Res<Vec<String>> {
    if array.is_null() {
        return Err(invalid(format!("argument {name} is null")).into());
    }
    let len = env.get_array_length(array)?;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let obj = env.get_object_array_element(array, i)?;
        if obj.is_null() {
            return Err(invalid(format!("{name}[{i}] is null")).into());
        }
        let s = JString::from(obj);
        let value = opt_string(env, &s)?.unwrap_or_default();
        env.delete_local_ref(s)?;
        out.push(value);
    }
    Ok(out)
}

/// Name/value pairs from a flattened `String[]` (name, value, name, ...).
pub(crate) fn pairs(
    env: &mut JNIEnv,
    array: &JObjectArray,
    name: &str,
) -> Res<Vec<(String, String)>> {
    let flat = strings(env, array, name)?;
    if flat.len() % 2 != 0 {
        return Err(invalid(format!("{name} must hold name/value pairs")).into());
    }
    Ok(flat
        .chunks_exact(2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect())
}

/// A `String[]` of `items`.
pub(crate) fn string_array<'l>(
    env: &mut JNIEnv<'l>,
    items: &[String],
) -> jni::errors::Result<JObjectArray<'l>> {
    let len = jint::try_from(items.len())
        .map_err(|_| jni::errors::Error::WrongJValueType("len", "too long"))?;
    let array = env.new_object_array(len, "java/lang/String", JObject::null())?;
    for (i, item) in items.iter().enumerate() {
        let s = env.new_string(item)?;
        env.set_object_array_element(&array, i as jint, &s)?;
        env.delete_local_ref(s)?;
    }
    Ok(array)
}

/// A new `String`.
pub(crate) fn new_string(env: &mut JNIEnv, s: &str) -> Res<jstring> {
    Ok(env.new_string(s)?.into_raw())
}

/// A new `String`, or null.
pub(crate) fn opt_new_string(env: &mut JNIEnv, s: Option<&str>) -> Res<jstring> {
    match s {
        Some(s) => new_string(env, s),
        None => Ok(std::ptr::null_mut()),
    }
}

/// A new `byte[]`.
pub(crate) fn new_bytes(env: &mut JNIEnv, b: &[u8]) -> Res<jbyteArray> {
    Ok(env.byte_array_from_slice(b)?.into_raw())
}

/// A new `String[]`.
pub(crate) fn new_strings(env: &mut JNIEnv, items: &[String]) -> Res<jobjectArray> {
    Ok(string_array(env, items)?.into_raw())
}
