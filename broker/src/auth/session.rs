//! A connection's authentication state and the gate every request passes
//! before its handler: AUTH, inline credentials, then authorization.

use cursus_wire::{Command, CommandPayload, ErrorPayload};
use tracing::{debug, info};

use super::permissions::rule;
use super::policy::check_topic;
use super::users::Permissions;
use crate::broker::Broker;
use crate::commands::params::resolve_wildcard_topic;
use crate::commands::{Reply, Request};

/// Failed authentication attempts after which a connection is closed.
pub const MAX_FAILURES: u32 = 3;

/// An authenticated principal and what it may do.
#[derive(Debug, Clone)]
struct Identity {
    principal: String,
    permissions: Permissions,
}

/// One connection's authentication state; lives in its serve loop.
#[derive(Debug, Default)]
pub struct Session {
    identity: Option<Identity>,
    failures: u32,
}

/// What to do with a request.
#[derive(Debug)]
pub enum Admission {
    /// Run it (inline credentials already removed).
    Run(Request),
    /// Answer this instead (AUTH's reply or a refusal).
    Answer(Reply),
}

impl Session {
    /// Handles AUTH and inline credentials and authorizes the request,
    /// before any handler validation (docs/security.md).
    pub fn admit(&mut self, broker: &Broker, request: Request) -> Admission {
        let (request, inline) = match request {
            Request::Command {
                command: Command::Auth,
                payload,
            } => return Admission::Answer(self.auth(broker, &payload)),
            Request::Command { command, payload } => {
                let (payload, inline) = take_inline(payload);
                (Request::Command { command, payload }, inline)
            }
            batch @ Request::Batch(_) => (batch, None),
        };
        let sasl = broker.config.enable_sasl;
        // Inline credentials authenticate this request only; with SASL off
        // they are ignored like AUTH.
        let inline_identity = match inline {
            Some(Ok(credentials)) if sasl => match self.verify(broker, credentials) {
                Ok(identity) => Some(identity),
                Err(reply) => return Admission::Answer(reply),
            },
            Some(Err(e)) if sasl => return Admission::Answer(Reply::Error(e)),
            _ => None,
        };
        let identity = inline_identity.as_ref().or(self.identity.as_ref());
        match authorize(broker, identity.filter(|_| sasl), request) {
            Ok(request) => Admission::Run(request),
            Err(e) => Admission::Answer(Reply::Error(e)),
        }
    }

    /// AUTH principal= token=.
    fn auth(&mut self, broker: &Broker, p: &CommandPayload) -> Reply {
        let credentials = match Credentials::from_fields(p, "token") {
            Ok(c) => c,
            Err(e) => return Reply::Error(e),
        };
        if !broker.config.enable_sasl {
            return Reply::text(format!(
                "OK authenticated principal={} enforced=false",
                credentials.principal
            ));
        }
        match self.verify(broker, credentials) {
            Ok(identity) => {
                let reply = format!("OK authenticated principal={}", identity.principal);
                self.identity = Some(identity);
                Reply::text(reply)
            }
            Err(reply) => {
                // A refused AUTH leaves the connection unauthenticated.
                self.identity = None;
                reply
            }
        }
    }

    /// Checks credentials; a failure counts, and the last allowed one
    /// closes the connection after its reply.
    fn verify(&mut self, broker: &Broker, c: Credentials) -> Result<Identity, Reply> {
        if let Some(permissions) = broker.config.users.verify(&c.principal, &c.token) {
            debug!(principal = %c.principal, "authenticated");
            return Ok(Identity {
                principal: c.principal,
                permissions,
            });
        }
        self.failures += 1;
        let error =
            ErrorPayload::new("authentication_failed").with_field("principal", &c.principal);
        if self.failures >= MAX_FAILURES {
            info!(principal = %c.principal, failures = self.failures, "authentication failed; closing");
            return Err(Reply::ErrorThenClose(error));
        }
        debug!(principal = %c.principal, failures = self.failures, "authentication failed");
        Err(Reply::Error(error))
    }
}

/// Offered principal and token. Never logged whole (no `Debug`).
struct Credentials {
    principal: String,
    token: String,
}

impl Credentials {
    /// `principal=` and `<token_field>=`, both non-empty, else `invalid_auth`.
    fn from_fields(p: &CommandPayload, token_field: &str) -> Result<Credentials, ErrorPayload> {
        let field = |name: &str| {
            p.get(name)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| ErrorPayload::new("invalid_auth").with_field("missing", name))
        };
        Ok(Credentials {
            principal: field("principal")?,
            token: field(token_field)?,
        })
    }
}

/// Removes inline `principal=` and `auth_token=` from a command's payload;
/// returns them when either was present.
fn take_inline(
    payload: CommandPayload,
) -> (CommandPayload, Option<Result<Credentials, ErrorPayload>>) {
    let inline = |n: &str| n == "principal" || n == "auth_token";
    if !payload.fields().iter().any(|(n, _)| inline(n)) {
        return (payload, None);
    }
    let credentials = Credentials::from_fields(&payload, "auth_token");
    let mut rest = CommandPayload::new();
    for positional in payload.positionals() {
        rest = rest.positional(positional.clone());
    }
    for (name, value) in payload.fields().iter().filter(|(n, _)| !inline(n)) {
        rest = rest.field(name.clone(), value);
    }
    (rest, Some(credentials))
}

/// The authorization of docs/security.md: authentication, the command's
/// permissions in order, then the topic's policy when the topic exists.
/// `identity` is `None` when SASL is off. A CONSUME or STREAM `topic=` glob
/// is resolved first (after the permission checks), so the policy checked is
/// that of the topic the handler then reads; the request is returned with
/// the resolved name.
fn authorize(
    broker: &Broker,
    identity: Option<&Identity>,
    request: Request,
) -> Result<Request, ErrorPayload> {
    let command = request.command();
    let payload = match &request {
        Request::Command { payload, .. } => Some(payload),
        Request::Batch(_) => None,
    };
    let rule = rule(command, payload);
    if broker.config.enable_sasl && rule.authenticated {
        let Some(identity) = identity else {
            return Err(
                ErrorPayload::new("authentication_required").with_field("command", command.name())
            );
        };
        if let Some(missing) = rule
            .permissions
            .iter()
            .find(|p| !identity.permissions.contains(**p))
        {
            return Err(ErrorPayload::new("NOT_AUTHORIZED_FOR_OPERATION")
                .with_field("command", command.name())
                .with_field("permission", missing.name()));
        }
    }
    let Some(access) = rule.access else {
        return Ok(request);
    };
    let request = resolve_wildcard_topic(broker, request)?;
    let name = match &request {
        Request::Command { payload, .. } => payload.get("topic"),
        Request::Batch(batch) => Some(batch.topic.as_str()),
    };
    // A missing topic is left to the handler (`topic_not_found`).
    if let Some(topic) = name.and_then(|n| broker.topics.get(n)) {
        check_topic(&topic.def, identity.map(|i| i.principal.as_str()), access)?;
    }
    Ok(request)
}
