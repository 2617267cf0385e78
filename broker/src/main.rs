//! The `cursus-broker` binary: parse configuration, start the health and
//! client listeners, recover the data directory, serve until SIGINT/SIGTERM.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use cursus_broker::broker::{Broker, OpenError};
use cursus_broker::config::{Cli, Config};
use cursus_broker::health::{self, Readiness};
use cursus_broker::{maintenance, server};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing::{error, info};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let config = match Config::from_cli(Cli::parse()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cursus-broker: {e}");
            return ExitCode::from(2);
        }
    };
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&config.log_level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours only for a person at a terminal: never in files, pipes or CI
    // logs, and never with NO_COLOR set (https://no-color.org).
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").map_or(true, |v| v.is_empty());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cursus-broker: cannot start runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            error!("{e}");
            eprintln!("cursus-broker: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(config: Config) -> Result<(), String> {
    let listener = TcpListener::bind(&config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let health_listener = TcpListener::bind(&config.health_listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.health_listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let health_addr = health_listener.local_addr().map_err(|e| e.to_string())?;
    let advertised = config
        .advertised_addr
        .clone()
        .unwrap_or_else(|| addr.to_string());
    let shutdown = CancellationToken::new();
    let readiness = Readiness::new();
    let health_task = tokio::spawn(health::serve(
        health_listener,
        readiness.clone(),
        shutdown.clone(),
    ));
    tokio::spawn(signals(shutdown.clone()));

    // Tests and scripts read the real ports from this line.
    println!(
        "cursus-broker listening addr={addr} health={health_addr} data_dir={}",
        config.data_dir.display()
    );
    let _ = std::io::stdout().flush();

    // Connections made during recovery wait in the accept backlog.
    let token = shutdown.clone();
    let opened = tokio::task::spawn_blocking(move || Broker::open(config, advertised, token))
        .await
        .map_err(|e| format!("recovery task failed: {e}"))?;
    let broker = match opened {
        Ok(broker) => broker,
        Err(OpenError::Transactions(e)) => {
            error!(
                error = %e,
                "transaction state cannot be recovered; staying not ready"
            );
            shutdown.cancelled().await;
            let _ = health_task.await;
            return Err(format!("not started: {e}"));
        }
        Err(OpenError::Groups(e)) => {
            // Never serve with an empty coordinator: stay alive and not
            // ready so the operator sees the failure on /ready and in the log.
            error!(
                error = %e,
                "consumer group state cannot be recovered; staying not ready \
                 (see Standalone Clean-Bootstrap Recovery)"
            );
            shutdown.cancelled().await;
            let _ = health_task.await;
            return Err(format!("not started: {e}"));
        }
        Err(e) => return Err(format!("recovery failed: {e}")),
    };
    let broker = Arc::new(broker);
    // Interrupted transactions are finished before the broker is ready.
    if let Err(e) = cursus_broker::txn::recover(&broker).await {
        error!(error = %e.render(), "transaction recovery failed; staying not ready");
        shutdown.cancelled().await;
        let _ = health_task.await;
        return Err(format!(
            "not started: transaction recovery failed: {}",
            e.render()
        ));
    }
    readiness.set_ready();
    info!(%addr, %health_addr, advertised = %broker.advertised, "ready");

    let upkeep = tokio::spawn(maintenance::run(Arc::clone(&broker)));
    server::listener::run(Arc::clone(&broker), listener).await;
    let _ = upkeep.await;
    let _ = health_task.await;
    info!("stopped");
    Ok(())
}

/// Cancels `shutdown` on SIGINT or SIGTERM.
async fn signals(shutdown: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
    info!("shutdown requested");
    shutdown.cancel();
}
