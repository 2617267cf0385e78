//! `AsyncAdmin`: administration resolved on asyncio futures.

use super::*;

/// Native async admin client (wrapped by `cursus.aio.AdminClient`).
#[pyclass(module = "cursus._cursus", frozen)]
pub struct AsyncAdmin {
    state: ProcessLocal<Client<Arc<EngineAdmin>>>,
}

impl AsyncAdmin {
    fn st(&self, py: Python<'_>) -> PyResult<&Client<Arc<EngineAdmin>>> {
        self.state.get().py_err(py)
    }
}

#[pymethods]
impl AsyncAdmin {
    /// Connects; resolves to an `AsyncAdmin`.
    #[staticmethod]
    #[pyo3(signature = (**config))]
    fn connect<'py>(
        py: Python<'py>,
        config: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let cfg = config::client(py, config)?;
        connect_client(
            py,
            "admin",
            "admin client",
            async { EngineAdmin::connect(cfg).await.map(Arc::new) },
            |state| AsyncAdmin { state },
        )
    }

    /// Creates a topic (or patches an existing one).
    #[pyo3(signature = (name, **options))]
    fn create_topic<'py>(
        &self,
        py: Python<'py>,
        name: String,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        let t = config::new_topic(py, &name, options)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.create_topic(&t).await },
            into::<TopicInfo, _>,
        )
    }

    /// Replaces the min_in_sync_replicas override.
    #[pyo3(signature = (topic, min_in_sync_replicas=None))]
    fn alter_topic_config<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        min_in_sync_replicas: Option<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.alter_topic_config(&topic, min_in_sync_replicas).await },
            into::<TopicInfo, _>,
        )
    }

    /// Deletes a topic.
    #[pyo3(signature = (topic, *, if_exists=false))]
    fn delete_topic<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        if_exists: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.delete_topic(&topic, if_exists).await },
            into::<DeleteOutcome, _>,
        )
    }

    /// Truncates a topic at its current revision.
    fn truncate_topic<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        expected_revision: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.truncate_topic(&topic, expected_revision).await },
            into::<TruncateOutcome, _>,
        )
    }

    /// CLUSTER_STATUS (distributed mode).
    fn cluster_status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.cluster_status().await },
            into::<ClusterStatus, _>,
        )
    }

    /// ELECT_LEADER: makes `broker_id` the leader of `topic`/`partition`.
    fn elect_leader<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        partition: u32,
        broker_id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.elect_leader(&topic, partition, &broker_id).await },
            into::<LeaderElection, _>,
        )
    }

    /// REASSIGN_PARTITIONS: moves the replicas of `topic`/`partition` to
    /// `replicas`; resolves once the move is done.
    fn reassign_partition<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        partition: u32,
        replicas: Vec<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                let ids: Vec<&str> = replicas.iter().map(String::as_str).collect();
                a.reassign_partition(&topic, partition, &ids).await
            },
            into::<PartitionReassignment, _>,
        )
    }

    /// LIST_CLUSTER (distributed mode).
    fn list_cluster<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.list_cluster().await },
            list::<ClusterBroker, _>,
        )
    }

    /// Topic names.
    fn list_topics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.list_topics().await },
            strings,
        )
    }

    /// DESCRIBE a topic.
    fn describe_topic<'py>(&self, py: Python<'py>, topic: String) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.describe_topic(&topic).await },
            into::<TopicDescription, _>,
        )
    }

    /// METADATA of a topic.
    fn metadata<'py>(&self, py: Python<'py>, topic: String) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.metadata(&topic).await },
            into::<TopicMetadata, _>,
        )
    }

    /// LIST_OFFSETS of a topic.
    #[pyo3(signature = (topic, partition=None))]
    fn list_offsets<'py>(
        &self,
        py: Python<'py>,
        topic: String,
        partition: Option<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.list_offsets(&topic, partition).await },
            list::<PartitionOffsets, _>,
        )
    }

    /// GROUP_STATUS of a group.
    fn group_status<'py>(&self, py: Python<'py>, group: String) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.group_status(&group).await },
            into::<GroupStatus, _>,
        )
    }

    /// Group names.
    fn list_groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.list_groups().await },
            strings,
        )
    }

    /// The broker's HELP lines.
    fn help<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.get(py)?;
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move { a.help().await },
            strings,
        )
    }

    /// Closes the client; closing twice does nothing.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.st(py)?.inner.take();
        bridge(
            py,
            &self.st(py)?.dispatcher,
            async move {
                if let Some(a) = a {
                    a.close().await;
                }
                Ok::<(), Error>(())
            },
            none,
        )
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.state.get().map_or(true, |s| s.inner.is_closed())
    }
}
