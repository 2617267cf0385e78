//! JNI native library of the Cursus Java binding (package `io.cursus`).
//!
//! Almost every entry point is generated: `cursus-bridge-gen` reads the
//! `#[bridge_fn]` and `bridge_results!` declarations of `bridge/src/api`
//! and writes one `Java_io_cursus_NativeBridge_*` function per declaration
//! and result accessor (`src/bridge_jni.rs`, checked in, included below)
//! and the Java class `io.cursus.NativeBridge` that declares them.
//! The hand-written part is the glue they call, one concern per module:
//!
//! - `boundary`: the panic boundary and exceptions (`NativeLib.error`);
//! - `convert`: Java arguments and results;
//! - `callbacks`: `NativeCompletion`s completed and `NativeListener`s
//!   called from callback threads;
//! - `poll`: the consumer's batch poll into an array the Java side reuses;
//! - `glue`: the names the generated code calls.
//!
//! Handles are ids into the bridge's registry carried in a Java `long`: a
//! closed, released or wrong handle throws instead of touching freed memory.

#![warn(missing_docs)]

mod boundary;
mod callbacks;
mod convert;
mod fork_watch;
mod poll;

/// What the generated entry points call (not every declaration uses every
/// conversion).
#[allow(unused_imports)]
mod glue {
    pub(crate) use crate::boundary::run;
    pub(crate) use crate::callbacks::{completion, delivery, handle_completion, listener};
    pub(crate) use crate::convert::{
        bytes, handle, new_bytes, new_string, new_strings, opt_bytes, opt_new_string, opt_string,
        pairs, string, strings, u32_arg, u64_arg, usize_arg,
    };
}

use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString};
use jni::sys::{
    jboolean, jbyteArray, jint, jlong, jobjectArray, jstring, JNI_ERR, JNI_VERSION_1_8,
};
use jni::{JNIEnv, JavaVM};
use std::ffi::c_void;
use std::panic::catch_unwind;

// The entry points, generated from the bridge declarations by
// cursus-bridge-gen (checked in so reviews see them; `make bridge-gen`).
include!("bridge_jni.rs");

/// Called by the JVM when the library is loaded: remembers the VM, the
/// `NativeLib` class and the completion methods (callback threads cannot
/// look classes up by name: their `FindClass` uses the system loader).
///
/// # Safety
/// Called only by the JVM, with a valid pointer to itself.
#[no_mangle]
pub unsafe extern "system" fn JNI_OnLoad(
    vm: *mut jni::sys::JavaVM,
    _reserved: *mut c_void,
) -> jint {
    let outcome = catch_unwind(|| {
        // SAFETY: the JVM passes a valid, live JavaVM pointer to JNI_OnLoad.
        let vm = match unsafe { JavaVM::from_raw(vm) } {
            Ok(vm) => vm,
            Err(_) => return JNI_ERR,
        };
        if let Ok(mut env) = vm.get_env() {
            match env.find_class("io/cursus/NativeLib") {
                Ok(class) => {
                    if let Ok(global) = env.new_global_ref(&class) {
                        let _ = boundary::NATIVE_LIB_CLASS.set(global);
                    }
                    let _ = env.delete_local_ref(class);
                }
                Err(_) => {
                    let _ = env.exception_clear();
                }
            }
            match callbacks::completion_ids(&mut env) {
                Ok(ids) => {
                    let _ = callbacks::COMPLETION.set(ids);
                }
                Err(_) => {
                    let _ = env.exception_clear();
                }
            }
        }
        let _ = callbacks::VM.set(vm);
        fork_watch::watch();
        JNI_VERSION_1_8
    });
    outcome.unwrap_or(JNI_ERR)
}

/// `String NativeLib.nativeVersion()`: the library version, which the Java
/// classes check against their own at load.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_nativeVersion<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    boundary::run(&mut env, std::ptr::null_mut(), |env| {
        convert::new_string(env, env!("CARGO_PKG_VERSION"))
    })
}
