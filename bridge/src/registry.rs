//! Handles: what C and Java hold instead of pointers to Rust objects.
//!
//! A handle is a `u64` id (never 0, never reused) into one process-wide
//! table. Looking an id up clones an `Arc`, so:
//!
//! - a NULL, destroyed or wrong-kind handle is reported as an
//!   `invalid_handle` error, never dereferenced;
//! - a handle destroyed by one thread while another is inside a call on it
//!   stays alive until that call returns.
//!
//! Each entry also carries a side slot ([`Side`]) where a binding keeps
//! per-handle data of its own, which dies with the handle (the C ABI keeps
//! the NUL-terminated copies of the strings its accessors lend out there).

use cursus::{Error, Result};
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A handle id as C and Java hold it.
pub type HandleId = u64;

/// An object that bindings may hold by handle.
pub trait Handle: Any + Send + Sync {
    /// What the handle is called in errors ("producer", "topic info").
    const KIND: &'static str;
}

/// Per-handle data a binding keeps beside the object.
#[derive(Default)]
pub struct Side {
    slot: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Side {
    /// The binding's data of type `T`, created with `T::default()` on first use.
    pub fn with<T: Any + Send + Default, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if !slot.as_ref().is_some_and(|b| b.is::<T>()) {
            *slot = Some(Box::new(T::default()));
        }
        let data = slot
            .as_mut()
            .and_then(|b| b.downcast_mut::<T>())
            .expect("just made");
        f(data)
    }
}

struct Entry {
    kind: &'static str,
    object: Arc<dyn Any + Send + Sync>,
    side: Arc<Side>,
}

const SHARDS: usize = 16;

/// The first handle id (see `registry()` for why not 1).
pub const FIRST_ID: HandleId = 0x1_0000;
const _: () = assert!(
    FIRST_ID >= 4096,
    "Go aborts on pointer-typed values below 4096"
);

struct Registry {
    next: AtomicU64,
    shards: [Mutex<HashMap<HandleId, Entry>>; SHARDS],
}

fn registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| Registry {
        // Go keeps handles in pointer-typed cgo values (`*C.cursus_consumer_t`),
        // and its runtime aborts ("invalid pointer found on stack") when a
        // stack copy meets a pointer below 4096: ids start well above that
        // (and far below any Go heap address, which the GC would check).
        next: AtomicU64::new(FIRST_ID),
        shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
    })
}

fn shard(id: HandleId) -> MutexGuard<'static, HashMap<HandleId, Entry>> {
    registry().shards[(id as usize) % SHARDS]
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Registers `object`; returns its new handle.
pub fn insert<T: Handle>(object: T) -> HandleId {
    insert_arc(Arc::new(object))
}

/// Registers a shared object; returns its new handle.
pub fn insert_arc<T: Handle>(object: Arc<T>) -> HandleId {
    let id = registry().next.fetch_add(1, Ordering::Relaxed);
    shard(id).insert(
        id,
        Entry {
            kind: T::KIND,
            object,
            side: Arc::new(Side::default()),
        },
    );
    id
}

fn invalid(id: HandleId, kind: &str) -> Error {
    let message = if id == 0 {
        format!("the {kind} handle is NULL")
    } else {
        format!("invalid {kind} handle (destroyed, or not a {kind})")
    };
    Error::invalid_argument(message).with_code("invalid_handle")
}

/// The object behind a handle of kind `T`.
pub fn get<T: Handle>(id: HandleId) -> Result<Arc<T>> {
    get_with_side(id).map(|(object, _)| object)
}

/// The object behind a handle of kind `T`, with its side slot.
pub fn get_with_side<T: Handle>(id: HandleId) -> Result<(Arc<T>, Arc<Side>)> {
    let found = shard(id)
        .get(&id)
        .map(|e| (Arc::clone(&e.object), Arc::clone(&e.side)));
    match found {
        Some((object, side)) => match object.downcast::<T>() {
            Ok(object) => Ok((object, side)),
            Err(_) => Err(invalid(id, T::KIND)),
        },
        None => Err(invalid(id, T::KIND)),
    }
}

/// Removes a handle of kind `T` (false when it is not one: NULL, already
/// destroyed, or another kind, which stays registered). The object lives
/// on while calls that looked it up are still running.
pub fn remove<T: Handle>(id: HandleId) -> bool {
    let mut shard = shard(id);
    match shard.get(&id) {
        Some(e) if e.kind == T::KIND && e.object.is::<T>() => {
            let entry = shard.remove(&id);
            drop(shard);
            drop(entry);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_ids_are_never_small_enough_to_trip_go_pointer_checks() {
        struct Probe;
        impl Handle for Probe {
            const KIND: &'static str = "probe";
        }
        let id = insert(Probe);
        assert!(id >= FIRST_ID);
        remove::<Probe>(id);
    }

    struct Thing(u32);
    impl Handle for Thing {
        const KIND: &'static str = "thing";
    }
    struct Other;
    impl Handle for Other {
        const KIND: &'static str = "other";
    }

    #[test]
    fn handles_are_checked_by_kind_and_liveness() {
        let id = insert(Thing(7));
        assert_eq!(get::<Thing>(id).unwrap().0, 7);
        let e = get::<Other>(id).err().unwrap();
        assert_eq!(e.code(), "invalid_handle");
        assert!(e.message().contains("not a other"), "{e}");
        assert!(!remove::<Other>(id), "the wrong kind is not removed");
        let held = get::<Thing>(id).unwrap();
        assert!(remove::<Thing>(id));
        assert!(!remove::<Thing>(id), "twice is harmless");
        assert_eq!(held.0, 7, "a looked-up object outlives its handle");
        assert!(get::<Thing>(id).is_err());
        assert!(get::<Thing>(0).err().unwrap().message().contains("NULL"));
    }

    #[test]
    fn the_side_slot_lives_with_the_handle() {
        let id = insert(Thing(1));
        let (_, side) = get_with_side::<Thing>(id).unwrap();
        side.with(|n: &mut u32| *n += 1);
        let (_, again) = get_with_side::<Thing>(id).unwrap();
        assert_eq!(again.with(|n: &mut u32| *n), 1);
        remove::<Thing>(id);
    }
}
