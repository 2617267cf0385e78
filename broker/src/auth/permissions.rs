//! What each command needs: the table of docs/security.md "Authorization"
//! as one `match`. Keep the two in step (a unit test compares them).

use cursus_wire::{Command, CommandPayload};

use super::users::Permission::{self, Admin, Group, TopicRead, TopicWrite, Transaction};

/// The kind of topic access a command needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads the topic (`read_acl`, `deny_read`).
    Read,
    /// Writes the topic (`write_acl`, `deny_write`).
    Write,
}

impl Access {
    /// `read` or `write`, as NOT_AUTHORIZED_FOR_TOPIC reports it.
    pub fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// False only for AUTH, HELP and EXIT.
    pub authenticated: bool,
    /// Permissions checked in this order (with SASL on).
    pub permissions: &'static [Permission],
    /// The topic access checked against the topic's policy.
    pub access: Option<Access>,
}

const fn needs(permissions: &'static [Permission], access: Option<Access>) -> Rule {
    Rule {
        authenticated: true,
        permissions,
        access,
    }
}

const READ: Option<Access> = Some(Access::Read);
const WRITE: Option<Access> = Some(Access::Write);

/// The rule of `command`; `payload` decides INIT_PRODUCER_ID.
pub fn rule(command: Command, payload: Option<&CommandPayload>) -> Rule {
    use Command::*;
    match command {
        Auth | Help | Exit => Rule {
            authenticated: false,
            permissions: &[],
            access: None,
        },
        Create | AlterTopicConfig | Delete | Truncate => needs(&[Admin], None),
        List | Describe | Metadata | FindCoordinator => needs(&[], None),
        ListOffsets => needs(&[TopicRead], READ),
        Publish => needs(&[TopicWrite], WRITE),
        Consume | Stream => needs(&[TopicRead, Group], READ),
        RegisterGroup | JoinGroup | SyncGroup | Heartbeat | LeaveGroup | GroupStatus
        | ListGroups | CommitOffset | BatchCommit | FetchOffset => needs(&[Group], None),
        InitProducerId if payload.is_some_and(is_transactional) => needs(&[Transaction], None),
        InitProducerId => needs(&[TopicWrite], None),
        BeginTxn | EndTxn | TxnStatus => needs(&[Transaction], None),
        TxnPublish | TxnAppendStream => needs(&[Transaction, TopicWrite], WRITE),
        SendOffsetsToTxn => needs(&[Transaction, Group], None),
        AppendStream | SaveSnapshot => needs(&[TopicWrite], WRITE),
        ReadStream
        | StreamVersion
        | ReadSnapshot
        | BrowseMessages
        | ReadStreamHistory
        | AggregateReplayProof
        | AggregateEventRangeRead => needs(&[TopicRead], READ),
        ListCluster | ClusterStatus | ElectLeader | ReassignPartitions => needs(&[Admin], None),
        // Refused by their handlers as before (distribution_not_enabled,
        // internal_command_unauthorized), once authenticated.
        JoinCluster | LeaveCluster | HeartbeatCluster | ReplicaCatchup | ReplicateMessage
        | ReplicateSnapshot | ListSnapshots | FetchSnapshot | CatchupSnapshots | RaftApply
        | InternalBatch | Negotiate => needs(&[], None),
    }
}

/// INIT_PRODUCER_ID names a transactional id (the handler's aliases too).
fn is_transactional(p: &CommandPayload) -> bool {
    ["transactional_id", "txn", "transaction"]
        .iter()
        .any(|f| p.get(f).is_some_and(|v| !v.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row of the table in docs/security.md, parsed, agrees with
    /// [`rule`].
    #[test]
    fn the_match_mirrors_the_documented_table() {
        let doc = include_str!("../../../docs/security.md");
        let table = doc
            .split("| Command | Permissions | Topic access |")
            .nth(1)
            .expect("the table");
        let mut rows = 0;
        for line in table.lines().skip(2) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if cells.len() < 4 {
                break;
            }
            let (commands, perms, access) = (cells[1], cells[2], cells[3]);
            if commands.starts_with("other ") {
                continue;
            }
            let expected_access = match access {
                "read" => READ,
                "write" => WRITE,
                _ => None,
            };
            let expected: Vec<&str> = if perms.starts_with('(') || perms.starts_with("none") {
                Vec::new()
            } else {
                perms.split(", ").collect()
            };
            let (names, payload) = match commands {
                c if c.starts_with("INIT_PRODUCER_ID with ") => (
                    vec!["INIT_PRODUCER_ID"],
                    Some(CommandPayload::new().field("transactional_id", "t")),
                ),
                c if c.starts_with("INIT_PRODUCER_ID without") => {
                    (vec!["INIT_PRODUCER_ID"], Some(CommandPayload::new()))
                }
                c => (
                    c.split(", ")
                        .map(|n| n.split_whitespace().next().unwrap())
                        .collect(),
                    None,
                ),
            };
            for name in names {
                let command = Command::from_name(name).unwrap_or_else(|| panic!("{name}"));
                let r = rule(command, payload.as_ref());
                let got: Vec<&str> = r.permissions.iter().map(|p| p.name()).collect();
                assert_eq!(got, expected, "{name} permissions");
                assert_eq!(r.access, expected_access, "{name} topic access");
                assert_eq!(r.authenticated, !perms.starts_with("none"), "{name}");
                rows += 1;
            }
        }
        assert!(rows > 40, "parsed only {rows} commands");
    }
}
