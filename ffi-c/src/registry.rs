//! The handle registry: every handle given to C is an id (never reused) into
//! one process-wide table. Looking an id up clones an `Arc`, so a handle
//! destroyed by one thread while another thread is inside a call on it stays
//! alive until that call returns, and any later use is detected and reported
//! instead of touching freed memory.

use crate::{ConfigObj, ConsumerObj, ErrorObj, MessageObj, ProducerObj};
use cursus::blocking::Admin;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Which kind of object a handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Config,
    Admin,
    Producer,
    Consumer,
    Message,
    Error,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Config => "config",
            Kind::Admin => "admin",
            Kind::Producer => "producer",
            Kind::Consumer => "consumer",
            Kind::Message => "message",
            Kind::Error => "error",
        }
    }
}

/// A registered object.
pub(crate) enum Object {
    Config(Arc<ConfigObj>),
    Admin(Arc<Admin>),
    Producer(Arc<ProducerObj>),
    Consumer(Arc<ConsumerObj>),
    Message(Arc<MessageObj>),
    Error(Arc<ErrorObj>),
}

impl Object {
    fn kind(&self) -> Kind {
        match self {
            Object::Config(_) => Kind::Config,
            Object::Admin(_) => Kind::Admin,
            Object::Producer(_) => Kind::Producer,
            Object::Consumer(_) => Kind::Consumer,
            Object::Message(_) => Kind::Message,
            Object::Error(_) => Kind::Error,
        }
    }
}

/// Shards keep contention low when many threads use different handles.
const SHARDS: usize = 16;

/// The table of live handles.
pub(crate) struct Registry {
    next: AtomicUsize,
    shards: OnceLock<Vec<Mutex<HashMap<usize, Object>>>>,
}

macro_rules! getter {
    ($fn:ident, $variant:ident, $ty:ty) => {
        pub(crate) fn $fn(&self, id: usize) -> Result<Arc<$ty>, cursus::Error> {
            match self.lookup(id, Kind::$variant, |o| match o {
                Object::$variant(a) => Some(Arc::clone(a)),
                _ => None,
            }) {
                Some(a) => Ok(a),
                None => Err(self.bad_handle(id, Kind::$variant)),
            }
        }
    };
}

impl Registry {
    pub(crate) const fn new() -> Registry {
        Registry {
            // Ids start high and step by 16 so they look like aligned pointers
            // and never collide with small integers passed by mistake.
            next: AtomicUsize::new(0x1000),
            shards: OnceLock::new(),
        }
    }

    fn shard(&self, id: usize) -> &Mutex<HashMap<usize, Object>> {
        let shards = self
            .shards
            .get_or_init(|| (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect());
        &shards[(id >> 4) % SHARDS]
    }

    /// Registers an object and returns its new id.
    pub(crate) fn insert(&self, obj: Object) -> usize {
        let id = self.next.fetch_add(16, Ordering::Relaxed);
        let mut map = self.shard(id).lock().unwrap_or_else(|p| p.into_inner());
        map.insert(id, obj);
        id
    }

    fn lookup<T>(&self, id: usize, _kind: Kind, f: impl FnOnce(&Object) -> Option<T>) -> Option<T> {
        if id == 0 {
            return None;
        }
        let map = self.shard(id).lock().unwrap_or_else(|p| p.into_inner());
        map.get(&id).and_then(f)
    }

    fn bad_handle(&self, id: usize, kind: Kind) -> cursus::Error {
        let name = kind.name();
        if id == 0 {
            return cursus::Error::invalid_argument(format!("{name} handle is NULL"));
        }
        let other = {
            let map = self.shard(id).lock().unwrap_or_else(|p| p.into_inner());
            map.get(&id).map(Object::kind)
        };
        match other {
            Some(k) => {
                cursus::Error::invalid_argument(format!("handle is a {}, not a {name}", k.name()))
            }
            None => cursus::Error::invalid_argument(format!(
                "{name} handle is invalid or already destroyed"
            ))
            .with_code("invalid_handle"),
        }
    }

    /// Removes an object of `kind` (ignores unknown ids and other kinds).
    /// The object itself is dropped outside the registry lock.
    pub(crate) fn remove(&self, id: usize, kind: Kind) {
        if id == 0 {
            return;
        }
        let removed = {
            let mut map = self.shard(id).lock().unwrap_or_else(|p| p.into_inner());
            match map.get(&id) {
                Some(o) if o.kind() == kind => map.remove(&id),
                _ => None,
            }
        };
        drop(removed);
    }

    /// Removes an error handle.
    pub(crate) fn remove_error(&self, id: usize) {
        self.remove(id, Kind::Error)
    }

    getter!(config, Config, ConfigObj);
    getter!(admin, Admin, Admin);
    getter!(producer, Producer, ProducerObj);
    getter!(consumer, Consumer, ConsumerObj);
    getter!(message, Message, MessageObj);
    getter!(error, Error, ErrorObj);
}
