//! JNI native library of the Cursus Java binding (package `io.cursus`).
//!
//! Every entry point is a static native method of the Java class
//! `io.cursus.NativeLib`. This crate only converts types, maps errors and
//! adapts threading; behaviour lives in the `cursus` engine, reached through
//! its blocking facade ([`cursus::blocking`]).
//!
//! - Handles are `Box::into_raw` pointers carried in a Java `long`. The Java
//!   wrappers guarantee that a handle is only passed while it is alive (a
//!   read lock is held around every call; `free` runs under the write lock)
//!   and always with its own type.
//! - Errors are thrown as the `io.cursus.CursusException` subclass the Java
//!   factory `NativeLib.error` builds from kind, code, class, retryable flag,
//!   message and fields.
//! - Panics are caught at every boundary and thrown as internal errors.
//! - Completion callbacks (`send`, `commitAsync`) run on engine threads,
//!   which attach to the JVM as daemon threads once and call
//!   `io.cursus.NativeCompletion` inside a local frame. The engine holds no
//!   lock during the callback.
//! - Structured results travel as one `byte[]` in a simple big-endian
//!   encoding that `io.cursus.Decoder` reads (see [`Enc`]).

#![warn(missing_docs)]

use bytes::Bytes;
use cursus::blocking::{Admin, Consumer, Producer};
use cursus::producer::{ProducerRecord, RecordMetadata};
use cursus::protocol::admin::{NewTopic, TopicInfo};
use cursus::protocol::group::TopicPartition;
use cursus::{ClientConfig, ConsumerConfig, Error, ErrorKind, ProducerConfig};
use jni::objects::{
    GlobalRef, JByteArray, JClass, JIntArray, JLongArray, JMethodID, JObject, JObjectArray,
    JString, JThrowable, JValue,
};
use jni::signature::{Primitive, ReturnType};
use jni::sys::{
    jboolean, jbyteArray, jint, jlong, jobjectArray, jstring, JNI_ERR, JNI_VERSION_1_8,
};
use jni::{JNIEnv, JavaVM};
use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::time::Duration;

/// The JVM, for attaching engine threads that run completion callbacks.
static VM: OnceLock<JavaVM> = OnceLock::new();
/// `io.cursus.NativeLib`, resolved with the class loader that loaded us.
static NATIVE_LIB_CLASS: OnceLock<GlobalRef> = OnceLock::new();
/// `NativeCompletion.succeed`/`fail`, resolved once: the callback hot path
/// then skips the signature parsing and lookup of `call_method`.
static COMPLETION: OnceLock<CompletionIds> = OnceLock::new();

/// Cached method ids of `io.cursus.NativeCompletion` (the class reference
/// keeps the ids valid).
struct CompletionIds {
    _class: GlobalRef,
    succeed: JMethodID,
    fail: JMethodID,
}

const COMPLETION_CLASS: &str = "io/cursus/NativeCompletion";
const SUCCEED_SIG: &str = "(Ljava/lang/String;IJJ)V";
const FAIL_SIG: &str = "(Lio/cursus/CursusException;)V";

fn completion_ids(env: &mut JNIEnv) -> jni::errors::Result<CompletionIds> {
    let class = env.find_class(COMPLETION_CLASS)?;
    let succeed = env.get_method_id(&class, "succeed", SUCCEED_SIG)?;
    let fail = env.get_method_id(&class, "fail", FAIL_SIG)?;
    let global = env.new_global_ref(&class)?;
    env.delete_local_ref(class)?;
    Ok(CompletionIds {
        _class: global,
        succeed,
        fail,
    })
}

const NATIVE_LIB: &str = "io/cursus/NativeLib";
const ERROR_SIG: &str = "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;ZLjava/lang/String;[Ljava/lang/String;)Lio/cursus/CursusException;";

/// Why a native call failed.
enum Failure {
    /// An engine error, thrown as its `CursusException` subclass.
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

type Res<T> = std::result::Result<T, Failure>;

/// Called by the JVM when the library is loaded: remembers the VM and the
/// `NativeLib` class (engine threads cannot look it up by name, since
/// `FindClass` on an attached thread uses the system class loader).
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
            if let Ok(class) = env.find_class(NATIVE_LIB) {
                if let Ok(global) = env.new_global_ref(&class) {
                    let _ = NATIVE_LIB_CLASS.set(global);
                }
                let _ = env.delete_local_ref(class);
            } else {
                let _ = env.exception_clear();
            }
            match completion_ids(&mut env) {
                Ok(ids) => {
                    let _ = COMPLETION.set(ids);
                }
                Err(_) => {
                    let _ = env.exception_clear();
                }
            }
        }
        let _ = VM.set(vm);
        JNI_VERSION_1_8
    });
    outcome.unwrap_or(JNI_ERR)
}

fn panic_message(panic: Box<dyn Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

/// Runs one native method body: catches panics and turns failures into a
/// pending Java exception, returning `default` to the JVM in that case.
fn run<'l, T, F>(env: &mut JNIEnv<'l>, default: T, body: F) -> T
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
            let msg = panic_message(panic);
            throw(
                env,
                Failure::Engine(
                    Error::internal(format!("panic in the Cursus native library: {msg}"))
                        .with_code("panic"),
                ),
            );
            default
        }
    }
}

fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Broker => "broker",
        ErrorKind::Io => "io",
        ErrorKind::Timeout => "timeout",
        ErrorKind::Protocol => "protocol",
        ErrorKind::Closed => "closed",
        ErrorKind::InvalidArgument => "invalid_argument",
        _ => "internal",
    }
}

/// Builds the `CursusException` for `err` through `NativeLib.error`.
fn error_object<'l>(env: &mut JNIEnv<'l>, err: &Error) -> jni::errors::Result<JObject<'l>> {
    let kind = env.new_string(kind_name(err.kind()))?;
    let code = env.new_string(err.code())?;
    let class = env.new_string(err.class().name())?;
    let message = env.new_string(err.message())?;
    let flat: Vec<&str> = err
        .fields()
        .iter()
        .flat_map(|(k, v)| [k.as_str(), v.as_str()])
        .collect();
    let fields = string_array(env, &flat)?;
    let args = [
        JValue::Object(&kind),
        JValue::Object(&code),
        JValue::Object(&class),
        JValue::Bool(u8::from(err.retryable())),
        JValue::Object(&message),
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
    for local in [kind, code, class, message] {
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
    match error_object(env, &err) {
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

/// A `String[]` from Rust strings.
fn string_array<'l>(env: &mut JNIEnv<'l>, items: &[&str]) -> jni::errors::Result<JObjectArray<'l>> {
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

/// Reads a `String[]` (null elements are refused).
fn read_strings(env: &mut JNIEnv, array: &JObjectArray) -> Res<Vec<String>> {
    if array.is_null() {
        return Err(Error::invalid_argument("array argument is null").into());
    }
    let len = env.get_array_length(array)?;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let obj = env.get_object_array_element(array, i)?;
        if obj.is_null() {
            return Err(Error::invalid_argument("array element is null").into());
        }
        let s = JString::from(obj);
        let value: String = env.get_string(&s)?.into();
        env.delete_local_ref(s)?;
        out.push(value);
    }
    Ok(out)
}

fn read_string(env: &mut JNIEnv, s: &JString) -> Res<String> {
    if s.is_null() {
        return Err(Error::invalid_argument("string argument is null").into());
    }
    Ok(env.get_string(s)?.into())
}

fn new_string_raw(env: &mut JNIEnv, s: &str) -> Res<jstring> {
    Ok(env.new_string(s)?.into_raw())
}

fn string_array_raw(env: &mut JNIEnv, items: &[String]) -> Res<jobjectArray> {
    let refs: Vec<&str> = items.iter().map(String::as_str).collect();
    Ok(string_array(env, &refs)?.into_raw())
}

fn bytes_raw(env: &mut JNIEnv, bytes: &[u8]) -> Res<jbyteArray> {
    Ok(env.byte_array_from_slice(bytes)?.into_raw())
}

/// Name/value pairs from a flattened `String[]`.
fn pairs(env: &mut JNIEnv, kv: &JObjectArray) -> Res<Vec<(String, String)>> {
    let flat = read_strings(env, kv)?;
    if flat.len() % 2 != 0 {
        return Err(Error::invalid_argument("options must come as name/value pairs").into());
    }
    Ok(flat
        .chunks_exact(2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect())
}

fn client_config(pairs: &[(String, String)]) -> Result<ClientConfig, Error> {
    let mut c = ClientConfig::default();
    for (k, v) in pairs {
        c.set(k, v)?;
    }
    c.validate()?;
    Ok(c)
}

fn producer_config(pairs: &[(String, String)]) -> Result<ProducerConfig, Error> {
    let mut c = ProducerConfig::default();
    for (k, v) in pairs {
        c.set(k, v)?;
    }
    c.validate()?;
    Ok(c)
}

fn consumer_config(pairs: &[(String, String)]) -> Result<ConsumerConfig, Error> {
    let mut c = ConsumerConfig::default();
    for (k, v) in pairs {
        c.set(k, v)?;
    }
    c.validate()?;
    Ok(c)
}

fn timeout_opt(ms: jlong) -> Option<Duration> {
    u64::try_from(ms).ok().map(Duration::from_millis)
}

fn timeout(ms: jlong) -> Duration {
    timeout_opt(ms).unwrap_or(Duration::ZERO)
}

fn u32_arg(name: &str, v: jint) -> Res<u32> {
    u32::try_from(v).map_err(|_| {
        Error::invalid_argument(format!("{name} must not be negative, got {v}")).into()
    })
}

// ---------------------------------------------------------------------------
// Handles

/// Moves `value` to the heap and returns its address as a Java `long`.
fn into_handle<T>(value: T) -> jlong {
    Box::into_raw(Box::new(value)) as jlong
}

/// Borrows the object behind a handle.
///
/// # Safety
/// `h` must be 0 or a value returned by [`into_handle::<T>`] that has not
/// been passed to [`free_handle`], and must stay so while the borrow lives.
/// The Java wrappers guarantee both: they pass only their own handle, under
/// a read lock that `free` (run under the write lock) cannot overtake.
unsafe fn handle<'a, T>(h: jlong, what: &str) -> Res<&'a T> {
    if h == 0 {
        return Err(Error::closed(what).into());
    }
    // SAFETY: guaranteed by this function's contract (see above).
    Ok(unsafe { &*(h as *const T) })
}

/// Drops the object behind a handle.
///
/// # Safety
/// `h` must be 0 or a live value from [`into_handle::<T>`]; it is dead after
/// this call. Java calls this once, under the write lock, after which it
/// zeroes its copy of the handle.
unsafe fn free_handle<T>(h: jlong) {
    if h != 0 {
        // SAFETY: guaranteed by this function's contract (see above).
        drop(unsafe { Box::from_raw(h as *mut T) });
    }
}

// ---------------------------------------------------------------------------
// Result encoding

/// Big-endian encoder for structured results, read by `io.cursus.Decoder`:
/// `u32` counts and small numbers, `i64` for engine `u64` values, strings
/// and byte strings as a `u32` length then the bytes (length `u32::MAX`
/// for an absent byte string), booleans as one byte.
#[derive(Default)]
struct Enc(Vec<u8>);

impl Enc {
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.i64(v as i64)
    }
    fn bool(&mut self, v: bool) -> &mut Self {
        self.0.push(u8::from(v));
        self
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }
    fn strs(&mut self, items: &[String]) -> &mut Self {
        self.u32(items.len() as u32);
        for s in items {
            self.str(s);
        }
        self
    }
    fn opt_u32(&mut self, v: Option<u32>) -> &mut Self {
        self.i64(v.map_or(-1, i64::from))
    }
    fn topic_info(&mut self, t: &TopicInfo) -> &mut Self {
        self.str(&t.name)
            .u32(t.partitions)
            .str(&t.cleanup_policy)
            .str(&t.partitioner)
            .str(&t.auth_policy)
            .strs(&t.read_acl)
            .strs(&t.write_acl)
            .u64(t.retention_hours)
            .u64(t.retention_bytes)
            .u64(t.revision)
            .u32(t.replication_factor)
            .bool(t.idempotent)
            .bool(t.event_sourcing)
            .u64(t.lifecycle_epoch)
            .opt_u32(t.min_in_sync_replicas)
            .opt_u32(t.effective_min_in_sync_replicas)
    }
}

// ---------------------------------------------------------------------------
// Completion callbacks (engine threads)

/// Runs `f` on the current (engine) thread attached to the JVM, inside a
/// local frame so its local references are released. Attaching is done
/// once per thread, as a daemon so it never keeps the JVM alive.
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

/// Completes a `NativeCompletion` with a failure.
fn complete_failure(
    env: &mut JNIEnv,
    completion: &GlobalRef,
    err: &Error,
) -> jni::errors::Result<()> {
    let ex = error_object(env, err)?;
    call_completion(env, completion, false, &[JValue::Object(&ex)])
}

/// Calls `succeed` or `fail` on a `NativeCompletion`, through the cached
/// method ids when `JNI_OnLoad` could resolve them.
fn call_completion(
    env: &mut JNIEnv,
    completion: &GlobalRef,
    succeed: bool,
    args: &[JValue],
) -> jni::errors::Result<()> {
    match COMPLETION.get() {
        Some(ids) => {
            let id = if succeed { ids.succeed } else { ids.fail };
            let raw: Vec<jni::sys::jvalue> = args.iter().map(JValue::as_jni).collect();
            // SAFETY: `id` was resolved on NativeCompletion with the matching
            // signature (SUCCEED_SIG / FAIL_SIG), `completion` is a
            // NativeCompletion, and `args` follow that signature.
            unsafe {
                env.call_method_unchecked(
                    completion.as_obj(),
                    id,
                    ReturnType::Primitive(Primitive::Void),
                    &raw,
                )
            }?;
        }
        None => {
            let (name, sig) = if succeed {
                ("succeed", SUCCEED_SIG)
            } else {
                ("fail", FAIL_SIG)
            };
            env.call_method(completion.as_obj(), name, sig, args)?;
        }
    }
    Ok(())
}

fn complete_send(completion: GlobalRef, outcome: cursus::Result<RecordMetadata>) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        with_jvm(|env| match &outcome {
            Ok(md) => {
                let topic = env.new_string(&md.topic)?;
                call_completion(
                    env,
                    &completion,
                    true,
                    &[
                        JValue::Object(&topic),
                        JValue::Int(md.partition as jint),
                        JValue::Long(md.offset.map_or(-1, |o| o as i64)),
                        JValue::Long(md.timestamp),
                    ],
                )
            }
            Err(e) => complete_failure(env, &completion, e),
        });
        // The global reference is released here, on this attached thread.
        drop(completion);
    }));
}

fn complete_commit(completion: GlobalRef, outcome: cursus::Result<()>) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        with_jvm(|env| match &outcome {
            Ok(()) => call_completion(
                env,
                &completion,
                true,
                &[
                    JValue::Object(&JObject::null()),
                    JValue::Int(-1),
                    JValue::Long(-1),
                    JValue::Long(0),
                ],
            ),
            Err(e) => complete_failure(env, &completion, e),
        });
        drop(completion);
    }));
}

// ---------------------------------------------------------------------------
// Library-level entry points

/// `String nativeVersion()`: the crate version, checked by the Java side.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_nativeVersion<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    run(&mut env, std::ptr::null_mut(), |env| {
        new_string_raw(env, env!("CARGO_PKG_VERSION"))
    })
}

/// `String[] options(int which)`: name, default, doc triples of the client
/// (0), producer (1, plus client) or consumer (2, plus client) options.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_options<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    which: jint,
) -> jobjectArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let own = match which {
            0 => &[][..],
            1 => ProducerConfig::options(),
            2 => ConsumerConfig::options(),
            _ => return Err(Error::invalid_argument("unknown option table").into()),
        };
        let flat: Vec<String> = own
            .iter()
            .chain(ClientConfig::options())
            .flat_map(|o| [o.name.to_owned(), o.default.to_owned(), o.doc.to_owned()])
            .collect();
        string_array_raw(env, &flat)
    })
}

/// `void validateConfig(int which, String[] kv)`: applies the pairs over
/// the defaults and checks them, throwing `ValidationException` if invalid.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_validateConfig<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    which: jint,
    kv: JObjectArray<'l>,
) {
    run(&mut env, (), |env| {
        let kv = pairs(env, &kv)?;
        match which {
            0 => client_config(&kv).map(drop),
            1 => producer_config(&kv).map(drop),
            _ => consumer_config(&kv).map(drop),
        }
        .map_err(Failure::from)
    })
}

/// `void debugRaise(String kind, String code, String message, String[]
/// fields)`: throws the error the engine would build (kind `broker` uses
/// the registry's class for `code`). For tests of the exception mapping;
/// kind `panic` panics inside the library.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_debugRaise<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    kind: JString<'l>,
    code: JString<'l>,
    message: JString<'l>,
    fields: JObjectArray<'l>,
) {
    run(&mut env, (), |env| {
        let kind = read_string(env, &kind)?;
        let code = read_string(env, &code)?;
        let message = read_string(env, &message)?;
        let fields = read_strings(env, &fields)?;
        let mut err = match kind.as_str() {
            "broker" => Error::from(cursus::wire::ErrorPayload::new(code).with_message(message)),
            "timeout" => Error::timeout(message).with_code(code),
            "io" => Error::io(message),
            "closed" => Error::closed(&message),
            "invalid_argument" => Error::invalid_argument(message),
            "protocol" => Error::protocol(message),
            "panic" => panic!("{message}"),
            _ => Error::internal(message),
        };
        for pair in fields.chunks_exact(2) {
            err = err.with_field(pair[0].clone(), pair[1].clone());
        }
        Err(err.into())
    })
}

// ---------------------------------------------------------------------------
// Admin

/// `long adminConnect(String[] kv)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminConnect<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    kv: JObjectArray<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let config = client_config(&pairs(env, &kv)?)?;
        Ok(into_handle(Admin::connect(config)?))
    })
}

fn parse_num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, Error> {
    v.trim()
        .parse()
        .map_err(|_| Error::invalid_argument(format!("topic setting {key}: bad number {v:?}")))
}

fn parse_flag(key: &str, v: &str) -> Result<bool, Error> {
    match v.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Error::invalid_argument(format!(
            "topic setting {key}: expected true or false, got {v:?}"
        ))),
    }
}

fn acl(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Builds a `NewTopic` from the pairs `io.cursus.NewTopic` produces.
fn new_topic(pairs: &[(String, String)]) -> Result<NewTopic, Error> {
    let mut t = NewTopic::default();
    for (k, v) in pairs {
        match k.as_str() {
            "name" => t.name = v.clone(),
            "partitions" => t.partitions = Some(parse_num(k, v)?),
            "idempotent" => t.idempotent = Some(parse_flag(k, v)?),
            "event_sourcing" => t.event_sourcing = Some(parse_flag(k, v)?),
            "replication_factor" => t.replication_factor = Some(parse_num(k, v)?),
            "min_in_sync_replicas" => t.min_in_sync_replicas = Some(parse_num(k, v)?),
            "cleanup_policy" => t.cleanup_policy = Some(v.clone()),
            "retention_hours" => t.retention_hours = Some(parse_num(k, v)?),
            "retention_bytes" => t.retention_bytes = Some(parse_num(k, v)?),
            "partitioner" => t.partitioner = Some(v.clone()),
            "auth_policy" => t.auth_policy = Some(v.clone()),
            "read_acl" => t.read_acl = Some(acl(v)),
            "write_acl" => t.write_acl = Some(acl(v)),
            _ => {
                return Err(Error::invalid_argument(format!(
                    "unknown topic setting {k:?}"
                )))
            }
        }
    }
    Ok(t)
}

/// `byte[] adminCreateTopic(long h, String[] topicKv)`: encoded TopicInfo.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminCreateTopic<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    kv: JObjectArray<'l>,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        let topic = new_topic(&pairs(env, &kv)?)?;
        let info = admin.create_topic(&topic)?;
        bytes_raw(env, &Enc::default().topic_info(&info).0)
    })
}

/// `byte[] adminAlterTopicConfig(long h, String topic, int minIsr)`
/// (`minIsr` < 0: back to the broker default).
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminAlterTopicConfig<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topic: JString<'l>,
    min_isr: jint,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        let topic = read_string(env, &topic)?;
        let info = admin.alter_topic_config(&topic, u32::try_from(min_isr).ok())?;
        bytes_raw(env, &Enc::default().topic_info(&info).0)
    })
}

/// `int adminDeleteTopic(long h, String topic, boolean ifExists)`: bit 0
/// deleted, bit 1 cleanup pending.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminDeleteTopic<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topic: JString<'l>,
    if_exists: jboolean,
) -> jint {
    run(&mut env, 0, |env| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        let topic = read_string(env, &topic)?;
        let o = admin.delete_topic(&topic, if_exists != 0)?;
        Ok(jint::from(o.deleted) | (jint::from(o.cleanup_pending) << 1))
    })
}

/// `byte[] adminTruncateTopic(long h, String topic, long expectedRevision)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminTruncateTopic<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topic: JString<'l>,
    revision: jlong,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        let topic = read_string(env, &topic)?;
        let o = admin.truncate_topic(&topic, revision as u64)?;
        let mut e = Enc::default();
        e.u64(o.revision)
            .u64(o.lifecycle_epoch)
            .bool(o.cleanup_pending);
        bytes_raw(env, &e.0)
    })
}

/// Runs `list` on the admin handle `h` and returns its strings as a
/// `String[]` (list_topics, list_groups, help).
fn admin_strings<'l>(
    env: &mut JNIEnv<'l>,
    h: jlong,
    list: impl FnOnce(&Admin) -> cursus::Result<Vec<String>>,
) -> jobjectArray {
    run(env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        string_array_raw(env, &list(admin)?)
    })
}

/// `String[] adminListTopics(long h)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminListTopics<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    admin_strings(&mut env, h, |admin| admin.list_topics())
}

/// `String[] adminListGroups(long h)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminListGroups<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    admin_strings(&mut env, h, |admin| admin.list_groups())
}

/// `String[] adminHelp(long h)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminHelp<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    admin_strings(&mut env, h, |admin| admin.help())
}

/// `byte[] adminDescribeTopic(long h, String topic)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminDescribeTopic<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topic: JString<'l>,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        let topic = read_string(env, &topic)?;
        let d = admin.describe_topic(&topic)?;
        let mut e = Enc::default();
        e.str(&d.topic)
            .str(&serde_json::to_string(&d.definition).unwrap_or_default())
            .u32(d.partitions.len() as u32);
        for p in &d.partitions {
            e.u32(p.id)
                .str(&p.leader)
                .strs(&p.replicas)
                .strs(&p.isr)
                .u64(p.leo)
                .u64(p.hwm);
        }
        bytes_raw(env, &e.0)
    })
}

/// `byte[] adminMetadata(long h, String topic)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminMetadata<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topic: JString<'l>,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        let topic = read_string(env, &topic)?;
        let m = admin.metadata(&topic)?;
        let mut e = Enc::default();
        e.topic_info(&m.topic)
            .strs(&m.leaders)
            .u32(m.epochs.len() as u32);
        for epoch in &m.epochs {
            e.u64(*epoch);
        }
        bytes_raw(env, &e.0)
    })
}

/// `byte[] adminListOffsets(long h, String topic, int partition)`
/// (`partition` < 0: every partition).
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminListOffsets<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topic: JString<'l>,
    partition: jint,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        let topic = read_string(env, &topic)?;
        let offsets = admin.list_offsets(&topic, u32::try_from(partition).ok())?;
        let mut e = Enc::default();
        e.u32(offsets.len() as u32);
        for o in &offsets {
            e.u32(o.partition)
                .u64(o.earliest)
                .u64(o.latest)
                .u64(o.leo)
                .u64(o.hwm);
        }
        bytes_raw(env, &e.0)
    })
}

/// `byte[] adminGroupStatus(long h, String group)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminGroupStatus<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    group: JString<'l>,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        let group = read_string(env, &group)?;
        let g = admin.group_status(&group)?;
        let mut e = Enc::default();
        e.str(&g.group_name)
            .str(&g.topic_name)
            .str(&g.state)
            .u64(g.generation)
            .u64(g.member_count)
            .u64(g.partition_count)
            .u32(g.members.len() as u32);
        for m in &g.members {
            e.str(&m.member_id)
                .str(&m.last_heartbeat)
                .u32(m.assignments.len() as u32);
            for a in &m.assignments {
                e.u32(*a);
            }
        }
        bytes_raw(env, &e.0)
    })
}

/// `void adminClose(long h)`: closes the client (idempotent).
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminClose<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: Java passes its live admin handle under its read lock.
        let admin = unsafe { handle::<Admin>(h, "admin") }?;
        Ok(admin.close()?)
    })
}

/// `void adminFree(long h)`: releases the handle (under the write lock).
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_adminFree<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: Java frees its own handle once, with no call in flight.
        unsafe { free_handle::<Admin>(h) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Producer

/// `long producerConnect(String[] kv)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_producerConnect<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    kv: JObjectArray<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let config = producer_config(&pairs(env, &kv)?)?;
        Ok(into_handle(Producer::connect(config)?))
    })
}

/// `void producerSend(long h, String topic, int partition, byte[] key,
/// byte[] value, long timestamp, boolean hasTimestamp, NativeCompletion c)`:
/// queues the record; `c` is completed on an engine thread. Failing to
/// queue throws instead, and `c` is never completed.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_cursus_NativeLib_producerSend<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topic: JString<'l>,
    partition: jint,
    key: JByteArray<'l>,
    value: JByteArray<'l>,
    timestamp: jlong,
    has_timestamp: jboolean,
    completion: JObject<'l>,
) {
    run(&mut env, (), |env| {
        // SAFETY: Java passes its live producer handle under its read lock.
        let producer = unsafe { handle::<Producer>(h, "producer") }?;
        let topic = read_string(env, &topic)?;
        let payload = if value.is_null() {
            Bytes::new()
        } else {
            Bytes::from(env.convert_byte_array(&value)?)
        };
        let mut record = ProducerRecord::new(topic, payload);
        if partition >= 0 {
            record = record.partition(partition as u32);
        }
        if !key.is_null() {
            record = record.key(Bytes::from(env.convert_byte_array(&key)?));
        }
        if has_timestamp != 0 {
            record.timestamp = Some(timestamp);
        }
        let completion = env.new_global_ref(&completion)?;
        producer.send_with_callback(record, move |outcome| complete_send(completion, outcome))?;
        Ok(())
    })
}

/// `void producerFlush(long h, long timeoutMs)` (`timeoutMs` < 0: no limit).
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_producerFlush<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    timeout_ms: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: Java passes its live producer handle under its read lock.
        let producer = unsafe { handle::<Producer>(h, "producer") }?;
        Ok(producer.flush(timeout_opt(timeout_ms))?)
    })
}

/// `void producerClose(long h, long timeoutMs)`: flushes within the
/// timeout, then closes (idempotent).
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_producerClose<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    timeout_ms: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: Java passes its live producer handle under its read lock.
        let producer = unsafe { handle::<Producer>(h, "producer") }?;
        Ok(producer.close(timeout(timeout_ms))?)
    })
}

/// `void producerFree(long h)`: releases the handle (under the write lock).
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_producerFree<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: Java frees its own handle once, with no call in flight.
        unsafe { free_handle::<Producer>(h) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Consumer

/// `long consumerConnect(String[] kv)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerConnect<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    kv: JObjectArray<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let config = consumer_config(&pairs(env, &kv)?)?;
        Ok(into_handle(Consumer::connect(config)?))
    })
}

/// `void consumerSubscribe(long h, String[] topics)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerSubscribe<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topics: JObjectArray<'l>,
) {
    run(&mut env, (), |env| {
        // SAFETY: Java passes its live consumer handle under its read lock.
        let consumer = unsafe { handle::<Consumer>(h, "consumer") }?;
        let topics = read_strings(env, &topics)?;
        Ok(consumer.subscribe(&topics)?)
    })
}

/// `void consumerSubscribePattern(long h, String pattern)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerSubscribePattern<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    pattern: JString<'l>,
) {
    run(&mut env, (), |env| {
        // SAFETY: Java passes its live consumer handle under its read lock.
        let consumer = unsafe { handle::<Consumer>(h, "consumer") }?;
        let pattern = read_string(env, &pattern)?;
        Ok(consumer.subscribe_pattern(&pattern)?)
    })
}

/// `byte[] consumerPoll(long h, long timeoutMs)`: the records, encoded as
/// a count then topic, partition, offset, timestamp, key, payload each.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerPoll<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    timeout_ms: jlong,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live consumer handle under its read lock.
        let consumer = unsafe { handle::<Consumer>(h, "consumer") }?;
        let records = consumer.poll(timeout(timeout_ms))?;
        let size: usize = records
            .iter()
            .map(|r| 40 + r.topic.len() + r.key.len() + r.payload.len())
            .sum();
        let mut e = Enc(Vec::with_capacity(4 + size));
        e.u32(records.len() as u32);
        for r in &records {
            e.str(&r.topic)
                .u32(r.partition)
                .u64(r.offset)
                .i64(r.timestamp)
                .bytes(&r.key)
                .bytes(&r.payload);
        }
        if e.0.len() > i32::MAX as usize {
            return Err(Error::internal("poll result exceeds 2 GiB").into());
        }
        bytes_raw(env, &e.0)
    })
}

/// `void consumerCommitSync(long h)`.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerCommitSync<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: Java passes its live consumer handle under its read lock.
        let consumer = unsafe { handle::<Consumer>(h, "consumer") }?;
        Ok(consumer.commit_sync()?)
    })
}

/// `void consumerCommitOffsets(long h, String[] topics, int[] partitions,
/// long[] offsets)`: commits explicit next offsets synchronously.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerCommitOffsets<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topics: JObjectArray<'l>,
    partitions: JIntArray<'l>,
    offsets: JLongArray<'l>,
) {
    run(&mut env, (), |env| {
        // SAFETY: Java passes its live consumer handle under its read lock.
        let consumer = unsafe { handle::<Consumer>(h, "consumer") }?;
        let topics = read_strings(env, &topics)?;
        let n = topics.len();
        let mut parts = vec![0 as jint; n];
        let mut offs = vec![0 as jlong; n];
        if env.get_array_length(&partitions)? as usize != n
            || env.get_array_length(&offsets)? as usize != n
        {
            return Err(Error::invalid_argument("offset arrays differ in length").into());
        }
        env.get_int_array_region(&partitions, 0, &mut parts)?;
        env.get_long_array_region(&offsets, 0, &mut offs)?;
        let mut list = Vec::with_capacity(n);
        for ((topic, p), o) in topics.into_iter().zip(parts).zip(offs) {
            let o = u64::try_from(o).map_err(|_| {
                Error::invalid_argument(format!("offset must not be negative, got {o}"))
            })?;
            list.push((TopicPartition::new(topic, u32_arg("partition", p)?), o));
        }
        Ok(consumer.commit_offsets(&list)?)
    })
}

/// `void consumerCommitAsync(long h, NativeCompletion c)`: `c` is completed
/// on an engine thread; failing to start the commit throws instead.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerCommitAsync<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    completion: JObject<'l>,
) {
    run(&mut env, (), |env| {
        // SAFETY: Java passes its live consumer handle under its read lock.
        let consumer = unsafe { handle::<Consumer>(h, "consumer") }?;
        let completion = env.new_global_ref(&completion)?;
        Ok(consumer.commit_async(move |outcome| complete_commit(completion, outcome))?)
    })
}

/// `long consumerCommitted(long h, String topic, int partition)`: the
/// committed next offset, or -1 when none.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerCommitted<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
    topic: JString<'l>,
    partition: jint,
) -> jlong {
    run(&mut env, -1, |env| {
        // SAFETY: Java passes its live consumer handle under its read lock.
        let consumer = unsafe { handle::<Consumer>(h, "consumer") }?;
        let topic = read_string(env, &topic)?;
        let tp = TopicPartition::new(topic, u32_arg("partition", partition)?);
        Ok(consumer.committed(&tp)?.map_or(-1, |o| o as jlong))
    })
}

/// `byte[] consumerAssignment(long h)`: count, then topic and partition each.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerAssignment<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: Java passes its live consumer handle under its read lock.
        let consumer = unsafe { handle::<Consumer>(h, "consumer") }?;
        let tps = consumer.assignment()?;
        let mut e = Enc::default();
        e.u32(tps.len() as u32);
        for tp in &tps {
            e.str(&tp.topic).u32(tp.partition);
        }
        bytes_raw(env, &e.0)
    })
}

/// `void consumerClose(long h)`: commits (with auto-commit), leaves the
/// group and closes (idempotent).
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerClose<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: Java passes its live consumer handle under its read lock.
        let consumer = unsafe { handle::<Consumer>(h, "consumer") }?;
        Ok(consumer.close()?)
    })
}

/// `void consumerFree(long h)`: releases the handle (under the write lock).
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerFree<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: Java frees its own handle once, with no call in flight.
        unsafe { free_handle::<Consumer>(h) };
        Ok(())
    })
}
