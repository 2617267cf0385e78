//! `AdminClient`: topic and group administration.

use super::*;

/// Topic and group administration.
#[pyclass(module = "cursus", frozen)]
pub struct AdminClient {
    inner: Slot<Arc<blocking::Admin>>,
}

#[pymethods]
impl AdminClient {
    /// Connects; keyword arguments are engine client options.
    #[new]
    #[pyo3(signature = (**config))]
    fn new(py: Python<'_>, config: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let cfg = config::client(py, config)?;
        let a = off_thread(py, move || blocking::Admin::connect(cfg))?;
        Ok(AdminClient {
            inner: Slot::new("admin client", Arc::new(a)),
        })
    }

    /// Creates a topic (or patches an existing one).
    #[pyo3(signature = (name, **options))]
    fn create_topic(
        &self,
        py: Python<'_>,
        name: String,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<TopicInfo> {
        let a = self.inner.get(py)?;
        let t = config::new_topic(py, &name, options)?;
        interruptible(py, async { a.as_async()?.create_topic(&t).await }).map(Into::into)
    }

    /// Replaces the min_in_sync_replicas override (`None`: broker default).
    #[pyo3(signature = (topic, min_in_sync_replicas=None))]
    fn alter_topic_config(
        &self,
        py: Python<'_>,
        topic: String,
        min_in_sync_replicas: Option<u32>,
    ) -> PyResult<TopicInfo> {
        let a = self.inner.get(py)?;
        interruptible(py, async {
            a.as_async()?
                .alter_topic_config(&topic, min_in_sync_replicas)
                .await
        })
        .map(Into::into)
    }

    /// Deletes a topic.
    #[pyo3(signature = (topic, *, if_exists=false))]
    fn delete_topic(
        &self,
        py: Python<'_>,
        topic: String,
        if_exists: bool,
    ) -> PyResult<DeleteOutcome> {
        let a = self.inner.get(py)?;
        interruptible(py, async {
            a.as_async()?.delete_topic(&topic, if_exists).await
        })
        .map(Into::into)
    }

    /// Truncates a topic at its current revision.
    fn truncate_topic(
        &self,
        py: Python<'_>,
        topic: String,
        expected_revision: u64,
    ) -> PyResult<TruncateOutcome> {
        let a = self.inner.get(py)?;
        interruptible(py, async {
            a.as_async()?
                .truncate_topic(&topic, expected_revision)
                .await
        })
        .map(Into::into)
    }

    /// CLUSTER_STATUS (distributed mode).
    fn cluster_status(&self, py: Python<'_>) -> PyResult<ClusterStatus> {
        let a = self.inner.get(py)?;
        interruptible(py, async { a.as_async()?.cluster_status().await }).map(Into::into)
    }

    /// ELECT_LEADER: makes `broker_id` the leader of `topic`/`partition`.
    fn elect_leader(
        &self,
        py: Python<'_>,
        topic: String,
        partition: u32,
        broker_id: String,
    ) -> PyResult<LeaderElection> {
        let a = self.inner.get(py)?;
        interruptible(py, async {
            a.as_async()?
                .elect_leader(&topic, partition, &broker_id)
                .await
        })
        .map(Into::into)
    }

    /// REASSIGN_PARTITIONS (a project extension): moves the replicas of
    /// `topic`/`partition` to the brokers `replicas` (broker ids, preferred
    /// leader first, as many as the topic's replication factor) and returns
    /// once the move is done: the new replicas in sync, the others dropped,
    /// the leader one of `replicas`; no acknowledged record is lost. After
    /// the client's `request_timeout_ms` it raises the retryable
    /// `TimeoutError` with code `reassignment_timeout` while the move goes
    /// on (call again with the same replicas to keep waiting). Errors:
    /// `topic_not_found`, `partition_not_found`, `broker_not_found`,
    /// `replica_broker_inactive`, `invalid_replicas`,
    /// `invalid_replication_factor`, `reassignment_in_progress`,
    /// `distribution_not_enabled` (standalone).
    fn reassign_partition(
        &self,
        py: Python<'_>,
        topic: String,
        partition: u32,
        replicas: Vec<String>,
    ) -> PyResult<PartitionReassignment> {
        let a = self.inner.get(py)?;
        interruptible(py, async {
            let ids: Vec<&str> = replicas.iter().map(String::as_str).collect();
            a.as_async()?
                .reassign_partition(&topic, partition, &ids)
                .await
        })
        .map(Into::into)
    }

    /// LIST_CLUSTER (distributed mode).
    fn list_cluster(&self, py: Python<'_>) -> PyResult<Vec<ClusterBroker>> {
        let a = self.inner.get(py)?;
        interruptible(py, async { a.as_async()?.list_cluster().await })
            .map(|v| v.into_iter().map(Into::into).collect())
    }

    /// Topic names.
    fn list_topics(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let a = self.inner.get(py)?;
        interruptible(py, async { a.as_async()?.list_topics().await })
    }

    /// DESCRIBE a topic.
    fn describe_topic(&self, py: Python<'_>, topic: String) -> PyResult<TopicDescription> {
        let a = self.inner.get(py)?;
        interruptible(py, async { a.as_async()?.describe_topic(&topic).await }).map(Into::into)
    }

    /// METADATA of a topic.
    fn metadata(&self, py: Python<'_>, topic: String) -> PyResult<TopicMetadata> {
        let a = self.inner.get(py)?;
        interruptible(py, async { a.as_async()?.metadata(&topic).await }).map(Into::into)
    }

    /// LIST_OFFSETS of a topic (one partition, or all).
    #[pyo3(signature = (topic, partition=None))]
    fn list_offsets(
        &self,
        py: Python<'_>,
        topic: String,
        partition: Option<u32>,
    ) -> PyResult<Vec<PartitionOffsets>> {
        let a = self.inner.get(py)?;
        let v = interruptible(py, async {
            a.as_async()?.list_offsets(&topic, partition).await
        })?;
        Ok(v.into_iter().map(Into::into).collect())
    }

    /// GROUP_STATUS of a group.
    fn group_status(&self, py: Python<'_>, group: String) -> PyResult<GroupStatus> {
        let a = self.inner.get(py)?;
        interruptible(py, async { a.as_async()?.group_status(&group).await }).map(Into::into)
    }

    /// Group names.
    fn list_groups(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let a = self.inner.get(py)?;
        interruptible(py, async { a.as_async()?.list_groups().await })
    }

    /// The broker's HELP lines.
    fn help(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let a = self.inner.get(py)?;
        interruptible(py, async { a.as_async()?.help().await })
    }

    /// Closes the client. Closing a closed client does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        match self.inner.take() {
            Some(a) => interruptible(py, async {
                a.as_async()?.close().await;
                Ok(())
            }),
            None => Ok(()),
        }
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}
