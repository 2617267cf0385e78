//! Completion callbacks: a `NativeCompletion` completed from the client's
//! callback thread (never a network thread). That thread attaches to the
//! JVM once, as a daemon (it never keeps the JVM alive), and detaches when
//! it ends; each completion runs inside a local frame. Listeners
//! (`NativeListener`) are called the same way, once per event.

use crate::boundary::{exception, Res};
use cursus_bridge::api::{Callback, Error, Listener, RecordMetadata};
use cursus_bridge::registry::{self, Handle};
use jni::objects::{GlobalRef, JMethodID, JObject, JValue};
use jni::signature::{Primitive, ReturnType};
use jni::sys::jint;
use jni::{JNIEnv, JavaVM};
use std::sync::{Arc, OnceLock};

/// The JVM, for attaching callback threads.
pub(crate) static VM: OnceLock<JavaVM> = OnceLock::new();
/// `NativeCompletion.succeed`/`fail`, resolved once at load.
pub(crate) static COMPLETION: OnceLock<CompletionIds> = OnceLock::new();

/// Cached method ids of `io.cursus.NativeCompletion` (the class reference
/// keeps the ids valid).
pub(crate) struct CompletionIds {
    _class: GlobalRef,
    succeed: JMethodID,
    succeed_send: JMethodID,
    succeed_handle: JMethodID,
    fail: JMethodID,
}

const COMPLETION_CLASS: &str = "io/cursus/NativeCompletion";
const SUCCEED_SIG: &str = "(Ljava/lang/String;IJJ)V";
const FAIL_SIG: &str = "(Lio/cursus/CursusException;)V";
/// `NativeCompletion.succeedSend(int, long, long)`: a send acknowledged (the
/// Java side knows its topic).
const SUCCEED_SEND_SIG: &str = "(IJJ)V";
/// `NativeCompletion.succeedHandle(long)`: a result lent as a handle.
const SUCCEED_HANDLE_SIG: &str = "(J)V";

/// Resolves the completion methods (at load, on a JVM thread).
pub(crate) fn completion_ids(env: &mut JNIEnv) -> jni::errors::Result<CompletionIds> {
    let class = env.find_class(COMPLETION_CLASS)?;
    let succeed = env.get_method_id(&class, "succeed", SUCCEED_SIG)?;
    let succeed_send = env.get_method_id(&class, "succeedSend", SUCCEED_SEND_SIG)?;
    let succeed_handle = env.get_method_id(&class, "succeedHandle", SUCCEED_HANDLE_SIG)?;
    let fail = env.get_method_id(&class, "fail", FAIL_SIG)?;
    let global = env.new_global_ref(&class)?;
    env.delete_local_ref(class)?;
    Ok(CompletionIds {
        _class: global,
        succeed,
        succeed_send,
        succeed_handle,
        fail,
    })
}

/// The cached completion methods, or the error saying they are missing (built
/// only then: an eager `ok_or` allocated two strings per acknowledgement).
fn completion_ids_or(name: &str, sig: &str) -> jni::errors::Result<&'static CompletionIds> {
    COMPLETION
        .get()
        .ok_or_else(|| jni::errors::Error::MethodNotFound {
            name: name.into(),
            sig: sig.into(),
        })
}

/// Runs `f` on this (callback) thread attached to the JVM, in a local frame.
fn with_jvm(f: impl FnOnce(&mut JNIEnv) -> jni::errors::Result<()>) {
    let Some(vm) = VM.get() else { return };
    let Ok(mut env) = vm.attach_current_thread_as_daemon() else {
        return;
    };
    let outcome = env.with_local_frame(16, |env| f(env));
    if outcome.is_err() || env.exception_check().unwrap_or(false) {
        let _ = env.exception_describe();
        let _ = env.exception_clear();
    }
}

fn call(
    env: &mut JNIEnv,
    target: &GlobalRef,
    succeed: bool,
    args: &[JValue],
) -> jni::errors::Result<()> {
    let ids = completion_ids_or("succeed/fail", SUCCEED_SIG)?;
    let id = if succeed { ids.succeed } else { ids.fail };
    let raw: Vec<jni::sys::jvalue> = args.iter().map(JValue::as_jni).collect();
    // SAFETY: `id` was resolved on NativeCompletion with the signature that
    // matches `succeed` (SUCCEED_SIG) or `fail` (FAIL_SIG), `target` is a
    // NativeCompletion (the generated Java declares the parameter so), and
    // `args` follow that signature.
    unsafe {
        env.call_method_unchecked(
            target.as_obj(),
            id,
            ReturnType::Primitive(Primitive::Void),
            &raw,
        )
    }?;
    Ok(())
}

fn fail(env: &mut JNIEnv, target: &GlobalRef, e: &Error) -> jni::errors::Result<()> {
    let ex = exception(env, e)?;
    call(env, target, false, &[JValue::Object(&ex)])
}

fn target(env: &mut JNIEnv, completion: &JObject) -> Res<GlobalRef> {
    if completion.is_null() {
        return Err(cursus_bridge::error::invalid("the completion is null").into());
    }
    Ok(env.new_global_ref(completion)?)
}

/// A delivery callback completing `completion` with the record's metadata:
/// `succeedSend(partition, offset, timestamp)`, three numbers (the Java
/// completion holds the topic the record was sent to, which is the one the
/// metadata names).
pub(crate) fn delivery(env: &mut JNIEnv, completion: &JObject) -> Res<Callback<RecordMetadata>> {
    let target = target(env, completion)?;
    Ok(Box::new(move |outcome| {
        with_jvm(|env| match &outcome {
            Ok(md) => {
                let ids = completion_ids_or("succeedSend", SUCCEED_SEND_SIG)?;
                let args = [
                    JValue::Int(md.partition as jint).as_jni(),
                    JValue::Long(md.offset.map_or(-1, |o| o as i64)).as_jni(),
                    JValue::Long(md.timestamp).as_jni(),
                ];
                // SAFETY: `succeed_send` was resolved on NativeCompletion with
                // SUCCEED_SEND_SIG (`void succeedSend(int, long, long)`),
                // `target` is a NativeCompletion (the generated Java declares
                // the parameter so), and `args` follow that signature.
                unsafe {
                    env.call_method_unchecked(
                        target.as_obj(),
                        ids.succeed_send,
                        ReturnType::Primitive(Primitive::Void),
                        &args,
                    )
                }?;
                Ok(())
            }
            Err(e) => fail(env, &target, e),
        });
        // The global reference is released here, on this attached thread.
        drop(target);
    }))
}

/// A completion callback completing `completion` with no value.
pub(crate) fn completion(env: &mut JNIEnv, completion: &JObject) -> Res<Callback<()>> {
    let target = target(env, completion)?;
    Ok(Box::new(move |outcome| {
        with_jvm(|env| match &outcome {
            Ok(()) => call(
                env,
                &target,
                true,
                &[
                    JValue::Object(&JObject::null()),
                    JValue::Int(-1),
                    JValue::Long(-1),
                    JValue::Long(0),
                ],
            ),
            Err(e) => fail(env, &target, e),
        });
        drop(target);
    }))
}

/// A completion callback whose result is a handle `T` (a delivery batch):
/// `completion.succeedHandle(handle)` with the handle lent for the call
/// (read it there with the `NativeBridge` accessors, never destroy it).
pub(crate) fn handle_completion<T: Handle>(
    env: &mut JNIEnv,
    completion: &JObject,
) -> Res<Callback<T>> {
    let target = target(env, completion)?;
    Ok(Box::new(move |outcome| {
        match outcome {
            Ok(result) => {
                let id = registry::insert(result);
                with_jvm(|env| {
                    let ids = completion_ids_or("succeedHandle", SUCCEED_HANDLE_SIG)?;
                    // SAFETY: `succeed_handle` was resolved on
                    // NativeCompletion with SUCCEED_HANDLE_SIG (`void
                    // succeedHandle(long)`), `target` is a NativeCompletion
                    // (the generated Java declares the parameter so), and the
                    // argument is one `long`.
                    unsafe {
                        env.call_method_unchecked(
                            target.as_obj(),
                            ids.succeed_handle,
                            ReturnType::Primitive(Primitive::Void),
                            &[JValue::Long(id as i64).as_jni()],
                        )
                    }?;
                    Ok(())
                });
                registry::remove::<T>(id);
            }
            Err(e) => with_jvm(|env| fail(env, &target, &e)),
        }
        drop(target);
    }))
}

/// `NativeListener.onEvent(long)`.
const ON_EVENT_SIG: &str = "(J)V";

/// A listener calling `listener.onEvent(handle)` once per event, on the
/// client's callback thread (attached as a daemon): the event is a
/// registered handle during the call and released after it. A Java
/// exception thrown by the listener is described (printed) and cleared;
/// it never reaches the engine. A null listener is `None` (clears it).
pub(crate) fn listener<T: Handle + Clone>(
    env: &mut JNIEnv,
    listener: &JObject,
) -> Res<Option<Listener<T>>> {
    if listener.is_null() {
        return Ok(None);
    }
    let class = env.get_object_class(listener)?;
    let on_event = env.get_method_id(&class, "onEvent", ON_EVENT_SIG)?;
    env.delete_local_ref(class)?;
    let target = env.new_global_ref(listener)?;
    Ok(Some(Arc::new(move |event: &T| {
        let id = registry::insert(event.clone());
        with_jvm(|env| {
            // SAFETY: `on_event` was resolved on the listener's own class
            // with ON_EVENT_SIG (`void onEvent(long)`), which the generated
            // Java declares through `NativeListener`; the global reference
            // keeps that class loaded, and the argument is one `long`.
            unsafe {
                env.call_method_unchecked(
                    target.as_obj(),
                    on_event,
                    ReturnType::Primitive(Primitive::Void),
                    &[JValue::Long(id as i64).as_jni()],
                )
            }?;
            Ok(())
        });
        registry::remove::<T>(id);
    })))
}
