//! The boundary every native method goes through: panics are caught (they
//! never unwind into the JVM) and failures become a pending Java exception,
//! the `CursusException` subclass `NativeLib.error` builds.

use cursus_bridge::api::Error;
use cursus_bridge::error::{from_panic, kind_name};
use jni::objects::{GlobalRef, JClass, JObject, JThrowable, JValue};
use jni::JNIEnv;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// `io.cursus.NativeLib`, resolved with the class loader that loaded us
/// (a callback thread's `FindClass` would use the system class loader).
pub(crate) static NATIVE_LIB_CLASS: OnceLock<GlobalRef> = OnceLock::new();

const NATIVE_LIB: &str = "io/cursus/NativeLib";
const ERROR_SIG: &str = "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;ZLjava/lang/String;Ljava/lang/String;[Ljava/lang/String;)Lio/cursus/CursusException;";

/// Why a native method failed.
pub(crate) enum Failure {
    /// An engine or bridge error, thrown as its `CursusException` subclass.
    Engine(Error),
    /// A JNI failure; `JavaException` means an exception is already pending.
    Jni(jni::errors::Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Engine(e)
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        Failure::Jni(e)
    }
}

/// What native method bodies return.
pub(crate) type Res<T> = std::result::Result<T, Failure>;

/// Runs one native method body: a panic or a failure becomes a pending Java
/// exception, and `default` is returned to the JVM.
pub(crate) fn run<'l, T, F>(env: &mut JNIEnv<'l>, default: T, body: F) -> T
where
    F: FnOnce(&mut JNIEnv<'l>) -> Res<T>,
{
    match catch_unwind(AssertUnwindSafe(|| body(env))) {
        Ok(Ok(v)) => v,
        Ok(Err(failure)) => {
            throw(env, failure);
            default
        }
        Err(panic) => {
            throw(env, Failure::Engine(from_panic(&*panic)));
            default
        }
    }
}

/// Builds the `CursusException` for `err` through `NativeLib.error`.
pub(crate) fn exception<'l>(env: &mut JNIEnv<'l>, err: &Error) -> jni::errors::Result<JObject<'l>> {
    let kind = env.new_string(kind_name(err.kind()))?;
    let code = env.new_string(err.code())?;
    let class = env.new_string(err.class().name())?;
    let message = env.new_string(err.message())?;
    let text = env.new_string(err.to_string())?;
    let flat: Vec<String> = err
        .fields()
        .iter()
        .flat_map(|(k, v)| [k.clone(), v.clone()])
        .collect();
    let fields = crate::convert::string_array(env, &flat)?;
    let args = [
        JValue::Object(&kind),
        JValue::Object(&code),
        JValue::Object(&class),
        JValue::Bool(u8::from(err.retryable())),
        JValue::Object(&message),
        JValue::Object(&text),
        JValue::Object(&fields),
    ];
    let result = match NATIVE_LIB_CLASS.get() {
        Some(global) => {
            let cls: &JClass = global.as_obj().into();
            env.call_static_method(cls, "error", ERROR_SIG, &args)
        }
        None => env.call_static_method(NATIVE_LIB, "error", ERROR_SIG, &args),
    };
    let obj = result?.l()?;
    for local in [kind, code, class, message, text] {
        env.delete_local_ref(local)?;
    }
    env.delete_local_ref(fields)?;
    Ok(obj)
}

/// Makes `failure` the pending Java exception (unless one already is).
fn throw(env: &mut JNIEnv, failure: Failure) {
    let err = match failure {
        Failure::Jni(jni::errors::Error::JavaException) => return,
        Failure::Jni(e) => Error::internal(format!("JNI call failed: {e}")),
        Failure::Engine(e) => e,
    };
    if env.exception_check().unwrap_or(true) {
        return;
    }
    match exception(env, &err) {
        Ok(obj) => {
            let _ = env.throw(JThrowable::from(obj));
        }
        Err(_) => {
            if !env.exception_check().unwrap_or(true) {
                let _ = env.throw_new("java/lang/IllegalStateException", err.to_string());
            }
        }
    }
}
