//! The authoritative topic registry: the `__topic_metadata.json` manifest
//! plus the live partitions built from it.
//!
//! Every mutation holds one admin lock, writes the manifest atomically
//! (durable) and only then exposes the new definition. Partition logs live
//! in `{data_dir}/topics/<topic>/<partition>/`; each topic directory also
//! holds a `lifecycle_epoch` marker so that a TRUNCATE interrupted by a crash
//! is finished on the next start instead of serving the old generation.
//! An event-sourcing topic's directory also holds its snapshot journal
//! (see [`SnapshotStore`]), emptied by TRUNCATE (and by the restart that
//! finishes an interrupted one) and removed by DELETE with the directory.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use cursus_wire::ErrorPayload;
use tracing::{info, warn};

use super::definition::{validate_definition, with_min_isr, MinIsr, TopicDefaults, TopicPatch};
use super::partition::{blocking, storage_error, Partition, RebuiltState};
use super::producers::ProducerTable;
use crate::eventsource::SnapshotStore;
use crate::storage::{
    atomic_file, LogConfig, Manifest, PartitionLog, StorageError, TopicDefinition,
};

/// Name of the per-topic lifecycle epoch marker file.
const EPOCH_MARKER: &str = "lifecycle_epoch";

/// A live topic: its definition and open partitions.
#[derive(Debug)]
pub struct Topic {
    /// The authoritative definition (as last written to the manifest).
    pub def: TopicDefinition,
    /// Partitions in id order.
    pub partitions: Vec<Arc<Partition>>,
    /// Snapshots and stream-head floors (event-sourcing topics only),
    /// shared across definition changes.
    pub snapshots: Option<Arc<SnapshotStore>>,
    /// Round-robin cursor, shared across definition changes.
    round_robin: Arc<AtomicU64>,
}

impl Topic {
    /// The partition `id`, if it exists.
    pub fn partition(&self, id: u32) -> Option<&Arc<Partition>> {
        self.partitions.get(id as usize)
    }

    /// The next partition in round-robin order.
    pub fn next_round_robin(&self) -> u32 {
        let n = self.partitions.len().max(1) as u64;
        (self.round_robin.fetch_add(1, Ordering::Relaxed) % n) as u32
    }
}

/// Result of a DELETE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeleteOutcome {
    /// The topic existed and was removed.
    pub deleted: bool,
    /// The manifest no longer has the topic but its storage could not be
    /// removed yet.
    pub cleanup_pending: bool,
}

/// The broker's topics.
#[derive(Debug)]
pub struct TopicRegistry {
    data_dir: PathBuf,
    topics_dir: PathBuf,
    log_config: LogConfig,
    defaults: TopicDefaults,
    live: RwLock<BTreeMap<String, Arc<Topic>>>,
    /// The manifest as last written; its lock serializes all mutations.
    manifest: tokio::sync::Mutex<Manifest>,
}

impl TopicRegistry {
    /// Loads the manifest and opens (recovers) every partition: blocking,
    /// run before the broker is ready. Finishes interrupted truncations and
    /// removes storage of topics the manifest no longer has.
    pub fn open(
        data_dir: &Path,
        log_config: LogConfig,
        defaults: TopicDefaults,
    ) -> Result<TopicRegistry, StorageError> {
        let topics_dir = data_dir.join("topics");
        std::fs::create_dir_all(&topics_dir).map_err(|e| StorageError::io(&topics_dir, e))?;
        atomic_file::remove_stale_temp_files(&Manifest::path(data_dir))?;
        let manifest = Manifest::load(data_dir)?;
        remove_orphans(&topics_dir, &manifest)?;
        let mut live = BTreeMap::new();
        for def in manifest.topics.values() {
            let dir = topics_dir.join(&def.name);
            let marker = read_epoch_marker(&dir)?;
            let snapshots = if def.event_sourcing {
                let store = SnapshotStore::open(&dir)?;
                if marker < def.lifecycle_epoch {
                    store.clear()?;
                }
                Some(Arc::new(store))
            } else {
                None
            };
            let mut partitions = Vec::with_capacity(def.partitions as usize);
            for id in 0..def.partitions {
                let log = PartitionLog::open(dir.join(id.to_string()), log_config.clone())?;
                if marker < def.lifecycle_epoch {
                    log.truncate_all(0)?;
                    super::producer_checkpoint::remove(log.dir())?;
                }
                let state = rebuild_partition_state(&log, def, snapshots.as_deref(), id)?;
                partitions.push(Arc::new(Partition::rebuilt(id, Arc::new(log), state)));
            }
            if marker != def.lifecycle_epoch {
                info!(topic = %def.name, epoch = def.lifecycle_epoch, "finished interrupted truncate");
                write_epoch_marker(&dir, def.lifecycle_epoch)?;
            }
            live.insert(
                def.name.clone(),
                Arc::new(Topic {
                    def: def.clone(),
                    partitions,
                    snapshots,
                    round_robin: Arc::new(AtomicU64::new(0)),
                }),
            );
        }
        info!(topics = live.len(), "topic registry recovered");
        Ok(TopicRegistry {
            data_dir: data_dir.to_path_buf(),
            topics_dir,
            log_config,
            defaults,
            live: RwLock::new(live),
            manifest: tokio::sync::Mutex::new(manifest),
        })
    }

    /// The broker defaults for new topics.
    pub fn defaults(&self) -> &TopicDefaults {
        &self.defaults
    }

    /// The live topic `name`.
    pub fn get(&self, name: &str) -> Option<Arc<Topic>> {
        self.read_live().get(name).cloned()
    }

    /// Every live topic, sorted by name.
    pub fn list(&self) -> Vec<Arc<Topic>> {
        self.read_live().values().cloned().collect()
    }

    fn read_live(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<Topic>>> {
        // A poisoned lock only means a panic elsewhere; the map is still consistent.
        self.live.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_live(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Arc<Topic>>> {
        self.live.write().unwrap_or_else(|e| e.into_inner())
    }

    /// CREATE: builds a new topic or patches an existing one. The manifest is
    /// durable before the new definition is visible.
    pub async fn create(&self, patch: &TopicPatch) -> Result<TopicDefinition, ErrorPayload> {
        let mut manifest = self.manifest.lock().await;
        let current = manifest.get(&patch.name).cloned();
        let next = patch.apply(current.as_ref(), &self.defaults)?;
        if current.as_ref() == Some(&next) {
            return Ok(next);
        }
        let first_new = current.as_ref().map_or(0, |c| c.partitions);
        let dir = self.topics_dir.join(&next.name);
        let is_new = current.is_none();
        let mut updated = manifest.clone();
        updated.upsert(next.clone());
        let (data_dir, config, def) =
            (self.data_dir.clone(), self.log_config.clone(), next.clone());
        let new_logs = blocking(move || {
            let mut snapshots = None;
            if is_new {
                // Leftovers of an earlier generation must never be served.
                remove_dir_if_exists(&dir)?;
                std::fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
                write_epoch_marker(&dir, def.lifecycle_epoch)?;
                if def.event_sourcing {
                    snapshots = Some(Arc::new(SnapshotStore::open(&dir)?));
                }
            }
            let mut logs = Vec::new();
            for id in first_new..def.partitions {
                logs.push(Arc::new(PartitionLog::open(
                    dir.join(id.to_string()),
                    config.clone(),
                )?));
            }
            updated.save(&data_dir)?;
            Ok((logs, updated, snapshots))
        })
        .await;
        let (logs, updated, new_snapshots) = new_logs.map_err(|e| {
            ErrorPayload::new("create_topic_failed")
                .with_field("topic", &patch.name)
                .with_field("reason", e.to_string())
        })?;
        *manifest = updated;
        let mut live = self.write_live();
        let (mut partitions, round_robin, snapshots) = match live.get(&next.name) {
            Some(t) => (
                t.partitions.clone(),
                Arc::clone(&t.round_robin),
                t.snapshots.clone(),
            ),
            None => (Vec::new(), Arc::new(AtomicU64::new(0)), new_snapshots),
        };
        for (i, log) in logs.into_iter().enumerate() {
            partitions.push(Arc::new(Partition::new(
                first_new + i as u32,
                log,
                ProducerTable::new(),
            )));
        }
        live.insert(
            next.name.clone(),
            Arc::new(Topic {
                def: next.clone(),
                partitions,
                snapshots,
                round_robin,
            }),
        );
        info!(topic = %next.name, revision = next.revision, partitions = next.partitions, "topic defined");
        Ok(next)
    }

    /// ALTER_TOPIC_CONFIG: replaces only the `min_in_sync_replicas` override.
    pub async fn alter_min_isr(
        &self,
        name: &str,
        value: MinIsr,
    ) -> Result<TopicDefinition, ErrorPayload> {
        let mut manifest = self.manifest.lock().await;
        let Some(current) = manifest.get(name).cloned() else {
            return Err(ErrorPayload::new("topic_not_found").with_field("topic", name));
        };
        let next = with_min_isr(&current, value);
        validate_definition(&next)?;
        if next == current {
            return Ok(current);
        }
        let mut updated = manifest.clone();
        updated.upsert(next.clone());
        let data_dir = self.data_dir.clone();
        let updated = blocking(move || updated.save(&data_dir).map(|()| updated))
            .await
            .map_err(|e| {
                ErrorPayload::new("alter_topic_config_failed")
                    .with_field("topic", name)
                    .with_field("reason", e.to_string())
            })?;
        *manifest = updated;
        let mut live = self.write_live();
        if let Some(t) = live.get(name).cloned() {
            live.insert(
                name.to_owned(),
                Arc::new(Topic {
                    def: next.clone(),
                    partitions: t.partitions.clone(),
                    snapshots: t.snapshots.clone(),
                    round_robin: Arc::clone(&t.round_robin),
                }),
            );
        }
        Ok(next)
    }

    /// DELETE: removes the topic from the manifest (durably), then its
    /// storage. Storage that cannot be removed is reported as
    /// `cleanup_pending` and retried by `if_exists=true` and on restart.
    pub async fn delete(&self, name: &str, if_exists: bool) -> Result<DeleteOutcome, ErrorPayload> {
        let mut manifest = self.manifest.lock().await;
        let dir = self.topics_dir.join(name);
        if manifest.get(name).is_none() {
            if !if_exists {
                return Err(ErrorPayload::new("topic_not_found").with_field("topic", name));
            }
            let cleanup = blocking(move || remove_dir_if_exists(&dir)).await;
            return Ok(DeleteOutcome {
                deleted: false,
                cleanup_pending: cleanup.is_err(),
            });
        }
        let mut updated = manifest.clone();
        updated.remove(name);
        let data_dir = self.data_dir.clone();
        let updated = blocking(move || updated.save(&data_dir).map(|()| updated))
            .await
            .map_err(|e| {
                ErrorPayload::new("delete_topic_failed")
                    .with_field("topic", name)
                    .with_field("reason", e.to_string())
            })?;
        *manifest = updated;
        let removed = self.write_live().remove(name);
        let logs = match removed {
            Some(topic) => fence(&topic.partitions).await,
            None => Vec::new(),
        };
        let cleanup = blocking(move || {
            for log in &logs {
                log.delete()?;
            }
            remove_dir_if_exists(&dir)
        })
        .await;
        if let Err(e) = &cleanup {
            warn!(topic = name, error = %e, "topic storage cleanup pending");
        }
        info!(topic = name, "topic deleted");
        Ok(DeleteOutcome {
            deleted: true,
            cleanup_pending: cleanup.is_err(),
        })
    }

    /// TRUNCATE: checks `expected_revision`, durably bumps revision and
    /// lifecycle epoch, then empties every partition (LEO = HWM = 0).
    /// Returns the new definition and whether storage cleanup is pending.
    pub async fn truncate(
        &self,
        name: &str,
        expected_revision: u64,
    ) -> Result<(TopicDefinition, bool), ErrorPayload> {
        let mut manifest = self.manifest.lock().await;
        let Some(current) = manifest.get(name).cloned() else {
            return Err(ErrorPayload::new("topic_not_found").with_field("topic", name));
        };
        if current.revision != expected_revision {
            return Err(ErrorPayload::new("topic_revision_conflict")
                .with_field("topic", name)
                .with_field("current", current.revision)
                .with_field("expected", expected_revision));
        }
        let mut next = current.clone();
        next.revision += 1;
        next.lifecycle_epoch += 1;
        let mut updated = manifest.clone();
        updated.upsert(next.clone());
        let data_dir = self.data_dir.clone();
        let updated = blocking(move || updated.save(&data_dir).map(|()| updated))
            .await
            .map_err(|e| {
                ErrorPayload::new("truncate_topic_failed")
                    .with_field("topic", name)
                    .with_field("reason", e.to_string())
            })?;
        *manifest = updated;
        let Some(topic) = self.get(name) else {
            return Err(ErrorPayload::new("topic_not_found").with_field("topic", name));
        };
        let logs = fence(&topic.partitions).await;
        let dir = self.topics_dir.join(name);
        let epoch = next.lifecycle_epoch;
        let to_truncate = logs.clone();
        let snapshots = topic.snapshots.clone();
        let cleanup = blocking(move || {
            for log in &to_truncate {
                log.truncate_all(0)?;
                super::producer_checkpoint::remove(log.dir())?;
            }
            if let Some(store) = &snapshots {
                store.clear()?;
            }
            write_epoch_marker(&dir, epoch)
        })
        .await;
        if let Err(e) = &cleanup {
            warn!(topic = name, error = %e, "truncate cleanup pending");
        }
        let partitions = logs
            .into_iter()
            .enumerate()
            .map(|(id, log)| Arc::new(Partition::new(id as u32, log, ProducerTable::new())))
            .collect();
        self.write_live().insert(
            name.to_owned(),
            Arc::new(Topic {
                def: next.clone(),
                partitions,
                snapshots: topic.snapshots.clone(),
                round_robin: Arc::clone(&topic.round_robin),
            }),
        );
        info!(topic = name, epoch, "topic truncated");
        Ok((next, cleanup.is_err()))
    }

    /// Replication (distributed mode): optionally truncates partition
    /// `partition` of `topic` to `truncate_to` (see
    /// [`PartitionLog::truncate_to`]), rebuilds its producer state,
    /// transaction index and stream index from the log as startup recovery
    /// does, and replaces the live partition with the rebuilt one. The old
    /// generation is fenced (in-flight appends finish first, none start)
    /// and closed, so long polls, streams and late writers see it end, as
    /// after TRUNCATE; publishes retry on the new one.
    ///
    /// Serialized with topic mutations. On failure the old generation is
    /// closed all the same (its state may no longer match its log) and the
    /// partition refuses work until a `reset_partition` succeeds.
    pub async fn reset_partition(
        &self,
        topic: &str,
        partition: u32,
        truncate_to: Option<u64>,
    ) -> Result<(), ErrorPayload> {
        let _manifest = self.manifest.lock().await;
        let Some(current) = self.get(topic) else {
            return Err(ErrorPayload::new("topic_not_found").with_field("topic", topic));
        };
        let Some(old) = current.partition(partition).cloned() else {
            return Err(ErrorPayload::new("partition_not_found")
                .with_field("topic", topic)
                .with_field("partition", partition));
        };
        let mut writer = old.writer.lock().await;
        let log = Arc::clone(old.log());
        let (def, snapshots) = (current.def.clone(), current.snapshots.clone());
        let rebuilt = blocking(move || {
            let state =
                truncate_and_rebuild(&log, truncate_to, &def, snapshots.as_deref(), partition)?;
            Ok((log, state))
        })
        .await;
        // The old generation must not checkpoint its producers any more:
        // they may name records that were just cut.
        *writer = ProducerTable::new();
        let (log, state) = match rebuilt {
            Ok(rebuilt) => rebuilt,
            Err(e) => {
                old.close();
                warn!(topic, partition, error = %e, "partition reset failed");
                return Err(storage_error(topic, partition, &e));
            }
        };
        let log_end = log.log_end_offset();
        let mut partitions = current.partitions.clone();
        partitions[partition as usize] = Arc::new(Partition::rebuilt(partition, log, state));
        self.write_live().insert(
            topic.to_owned(),
            Arc::new(Topic {
                def: current.def.clone(),
                partitions,
                snapshots: current.snapshots.clone(),
                round_robin: Arc::clone(&current.round_robin),
            }),
        );
        // Closed after the new generation is live, while appends still wait
        // on the old writer lock: they then retry on the new one.
        old.close();
        drop(writer);
        info!(topic, partition, ?truncate_to, log_end, "partition reset");
        Ok(())
    }
}

/// The state of partition `id` of `def` rebuilt from its log (producers,
/// transactions, streams with the floors its snapshot store recorded):
/// startup recovery and [`TopicRegistry::reset_partition`].
fn rebuild_partition_state(
    log: &PartitionLog,
    def: &TopicDefinition,
    snapshots: Option<&SnapshotStore>,
    id: u32,
) -> Result<RebuiltState, StorageError> {
    let mut state = Partition::rebuild_state(log, def.event_sourcing)?;
    if let Some(store) = snapshots {
        for (key, floor) in store.floors(id) {
            state.streams.raise_floor(&key, floor);
        }
    }
    Ok(state)
}

/// Truncates `log` to `truncate_to` (if given) and rebuilds the state of
/// partition `id` from it (blocking; see [`TopicRegistry::reset_partition`]).
fn truncate_and_rebuild(
    log: &PartitionLog,
    truncate_to: Option<u64>,
    def: &TopicDefinition,
    snapshots: Option<&SnapshotStore>,
    id: u32,
) -> Result<RebuiltState, StorageError> {
    if let Some(offset) = truncate_to {
        log.truncate_to(offset)?;
    }
    let state = rebuild_partition_state(log, def, snapshots, id)?;
    // The checkpoint may name records that are no longer in the log
    // (`rebuild_state` leaves those out while they lie at or past the log
    // end, but new appends would make them look valid again): replace it
    // with the rebuilt producers, which include its valid entries. It is
    // merged on write, so it is removed first; a crash in between loses
    // only the entries of producers whose records retention removed.
    let log_end = log.log_end_offset();
    let checkpoint = super::producer_checkpoint::load(log.dir())?;
    if checkpoint.values().any(|e| e.last_offset >= log_end) {
        super::producer_checkpoint::remove(log.dir())?;
        super::producer_checkpoint::write(log.dir(), &state.producers)?;
    }
    Ok(state)
}

/// Ends a partition generation: waits for in-flight appends (the writer
/// locks), then closes each partition so readers and late writers stop.
/// Returns the logs.
async fn fence(partitions: &[Arc<Partition>]) -> Vec<Arc<PartitionLog>> {
    let mut logs = Vec::with_capacity(partitions.len());
    for p in partitions {
        let _writer = p.writer.lock().await;
        p.close();
        logs.push(Arc::clone(p.log()));
    }
    logs
}

fn read_epoch_marker(topic_dir: &Path) -> Result<u64, StorageError> {
    let path = topic_dir.join(EPOCH_MARKER);
    match std::fs::read_to_string(&path) {
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| StorageError::InvalidDocument {
                path,
                reason: format!("lifecycle epoch marker {text:?} is not a number"),
            }),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(0),
        Err(e) => Err(StorageError::io(&path, e)),
    }
}

fn write_epoch_marker(topic_dir: &Path, epoch: u64) -> Result<(), StorageError> {
    std::fs::create_dir_all(topic_dir).map_err(|e| StorageError::io(topic_dir, e))?;
    atomic_file::write_atomic(
        &topic_dir.join(EPOCH_MARKER),
        format!("{epoch}\n").as_bytes(),
    )
}

fn remove_dir_if_exists(dir: &Path) -> Result<(), StorageError> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(StorageError::io(dir, e)),
    }
    if let Some(parent) = dir.parent() {
        atomic_file::sync_dir(parent)?;
    }
    Ok(())
}

/// Removes topic directories the manifest does not list: storage of deleted
/// topics whose cleanup did not finish.
fn remove_orphans(topics_dir: &Path, manifest: &Manifest) -> Result<(), StorageError> {
    let entries = std::fs::read_dir(topics_dir).map_err(|e| StorageError::io(topics_dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(topics_dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if manifest.get(&name).is_none() {
            warn!(topic = %name, "removing storage of a deleted topic");
            remove_dir_if_exists(&entry.path())?;
        }
    }
    Ok(())
}
