//! The consumer's batch poll into a buffer the Java side reuses.
//!
//! The generated `NativeBridge.consumerPollBatch` returns a new `byte[]` per
//! poll: 1.5 MB for 10,000 records of 100 B, a humongous allocation the JVM
//! zeroes and the collector reclaims, on every poll. Here the packed record
//! view (`bridge/src/records.rs`, packed by the bridge as for every language)
//! is copied into the array the previous poll returned when it is large
//! enough; only a larger poll allocates, with a quarter of headroom.
//!
//! The Java side owns the array (no native memory outlives the call, nothing
//! to free, no use after free): `CursusConsumer` takes it out of its slot for
//! the poll and decodes it before putting it back, so concurrent polls never
//! share one.

use crate::boundary::run;
use crate::convert;
use cursus_bridge::api::consumer::consumer_poll_batch;
use cursus_bridge::api::Consumer;
use jni::objects::{JByteArray, JClass};
use jni::sys::{jbyteArray, jint, jlong};
use jni::JNIEnv;

/// The smallest array a poll allocates (a poll of a few records then never
/// allocates again).
const MIN_CAPACITY: usize = 64 * 1024;

/// `byte[] NativeLib.consumerPollInto(long consumer, long timeoutMs, int
/// maxRecords, byte[] buffer)`: polls as `consumerPollBatch` and returns the
/// packed record view in `buffer` when it fits (the bytes past the view are
/// left as they were), else in a new, larger array. `buffer` may be null.
#[no_mangle]
pub extern "system" fn Java_io_cursus_NativeLib_consumerPollInto<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    consumer: jlong,
    timeout_ms: jlong,
    max_records: jint,
    buffer: JByteArray<'l>,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let consumer = convert::handle::<Consumer>(consumer)?;
        let max_records = convert::u32_arg("max_records", max_records)?;
        let packed = consumer_poll_batch(&consumer, timeout_ms, max_records)?;
        let fits = !buffer.is_null() && env.get_array_length(&buffer)? as usize >= packed.len();
        let target = if fits {
            buffer
        } else {
            // `pack` refuses views past i32::MAX bytes, so the length fits; the
            // headroom stays under the largest array a JVM allocates.
            let capacity = (packed.len() + packed.len() / 4)
                .max(MIN_CAPACITY)
                .min(i32::MAX as usize - 8)
                .max(packed.len());
            env.new_byte_array(capacity as jint)?
        };
        // SAFETY: `u8` and `i8` (`jbyte`) have the same size and alignment;
        // the slice covers exactly `packed`'s initialised bytes.
        let bytes =
            unsafe { std::slice::from_raw_parts(packed.as_ptr().cast::<i8>(), packed.len()) };
        env.set_byte_array_region(&target, 0, bytes)?;
        Ok(target.into_raw())
    })
}
