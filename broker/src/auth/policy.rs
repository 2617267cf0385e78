//! A topic's `auth_policy` (docs/security.md "Authorization"), applied to
//! the caller after the coarse permissions.

use cursus_wire::ErrorPayload;

use super::permissions::Access;
use crate::storage::{AuthPolicy, TopicDefinition};

/// Checks `access` to the topic for `principal` (`None` when SASL is off:
/// an `acl` topic then refuses everyone).
pub fn check_topic(
    def: &TopicDefinition,
    principal: Option<&str>,
    access: Access,
) -> Result<(), ErrorPayload> {
    let allowed = match def.auth_policy {
        AuthPolicy::Open => true,
        AuthPolicy::DenyWrite => access != Access::Write,
        AuthPolicy::DenyRead => access != Access::Read,
        AuthPolicy::Acl => {
            let acl = match access {
                Access::Read => &def.read_acl,
                Access::Write => &def.write_acl,
            };
            principal.is_some_and(|p| acl.iter().any(|entry| entry == "*" || entry == p))
        }
    };
    if allowed {
        return Ok(());
    }
    Err(ErrorPayload::new("NOT_AUTHORIZED_FOR_TOPIC")
        .with_field("topic", &def.name)
        .with_field("operation", access.name()))
}
