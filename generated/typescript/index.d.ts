/**
 * Generated from schemas/ by typescript/scripts/generate.mjs (`nox -s generate`) with
 * json-schema-to-typescript. Do not edit: change the schemas and regenerate.
 *
 * TypeScript cannot state every rule of the schemas (patterns, bounds, formats, conditional
 * members): `validate` of @toolcall-spec/schemas checks them all.
 */

/**
 * A UUID in its hyphenated 36-character form.
 */
export type Uuid = string;
/**
 * An RFC 3339 date-time with a time zone, e.g. `2026-11-30T12:00:00Z`.
 */
export type Timestamp = string;
/**
 * The `agents` capability family.
 */
export type AgentsFamily = RecordLifetime & {
  status: CapabilityStatus;
  /**
   * The `<major>.<minor>` of this host's own contract at which it began serving the family.
   */
  since: string;
  /**
   * When an experimental or deprecated family ends: a `<major>.<minor>` or a `YYYY-MM-DD` date.
   */
  until?: string;
  witness: Witness;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  profile?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  modelClasses?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  orchestratorPattern?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  memoryBackends?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  memoryConsolidation?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  commitments?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  orchestrator?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  dispatch?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  manifestRuntime?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  liveRuntime?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  deployment?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  roster?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  orgChart?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  dispatchMapping?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  reasoning?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  subRunAttestation?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  proposals?: unknown;
  /**
   * An OpenWOP v2 `agents` facet this package does not interpret; left unchecked.
   */
  goals?: unknown;
  evalSuite?: EvalSuiteCapability;
};
/**
 * A `stable` record has no `until`; an `experimental` or `deprecated` one must say `until` when it ends.
 */
export type RecordLifetime = unknown;
export type CapabilityStatus = "stable" | "experimental" | "deprecated";
/**
 * How an outside party can check the claim.
 */
export type Witness =
  "witnessable-unaided" | "witnessable-gated" | "seam-gated" | "claims-check" | "negative-existence";
/**
 * The `toolHooks` capability family (RFC 0064).
 */
export type ToolHooksFamily = RecordLifetime & {
  status: CapabilityStatus;
  /**
   * The `<major>.<minor>` of this host's own contract at which it began serving the family.
   */
  since: string;
  /**
   * When an experimental or deprecated family ends: a `<major>.<minor>` or a `YYYY-MM-DD` date.
   */
  until?: string;
  witness: Witness;
  /**
   * `true`: `agent.tool-called` carries argsHash/principal/transport and `agent.tool-returned` carries `status`/`durationMs`.
   */
  prePostEvents?: boolean;
  /**
   * `true`: a denied call returns `status: forbidden` (403).
   */
  perToolAuthorization?: boolean;
  /**
   * `true`: a throttled call returns `status: rate_limited` (429).
   */
  perToolRateLimit?: boolean;
};
/**
 * A v2 capability family record this package does not interpret: the record members are checked, the family's facets are not.
 */
export type CapabilityRecord = RecordLifetime & {
  status: CapabilityStatus;
  /**
   * The `<major>.<minor>` of this host's own contract at which it began serving the family.
   */
  since: string;
  /**
   * When an experimental or deprecated family ends: a `<major>.<minor>` or a `YYYY-MM-DD` date.
   */
  until?: string;
  witness: Witness;
  [k: string]: unknown | undefined;
};
/**
 * An error code OpenWOP v2 registers.
 */
export type RegisteredErrorCode =
  | "connection_provider_unresolved"
  | "connector_action_unresolved"
  | "credential_scope_unsupported"
  | "delegation_chain_cyclic"
  | "delegation_chain_too_long"
  | "idempotency_key_invalid"
  | "interop_version_unsupported"
  | "oauth_provider_unsupported"
  | "oauth_scope_unsupported"
  | "pack_dependency_cycle"
  | "pack_engine_unsupported"
  | "pack_integrity_failure"
  | "pack_kind_invalid"
  | "pack_lockfile_incomplete"
  | "pack_peer_dependency_missing"
  | "pack_peer_dependency_undefined"
  | "pack_signature_invalid"
  | "pack_validation_failed"
  | "unsupported_runtime"
  | "protocol_version_mismatch"
  | "schedule_horizon_exceeded"
  | "sub_chain_cycle"
  | "sub_chain_depth_exceeded"
  | "unsupported_stream_mode"
  | "until_in_past"
  | "validation_error"
  | "webhook_url_rejected"
  | "webhook_endpoint_unverified"
  | "connector_auth_declined"
  | "connection_auth_metadata_mismatch"
  | "audience_mismatch"
  | "connector_auth_expired"
  | "credential_revoked"
  | "credential_lifetime_exceeded"
  | "delegation_expired"
  | "identity_unresolvable"
  | "identity_unverified"
  | "interrupt_token_invalid"
  | "key_revoked"
  | "sender_constraint_missing"
  | "unauthenticated"
  | "credential_forbidden"
  | "credential_scope_forbidden"
  | "delegation_scope_amplified"
  | "forbidden"
  | "force_engine_version_forbidden"
  | "id_tenant_mismatch"
  | "mock_provider_forbidden"
  | "pack_namespace_unauthorized"
  | "run_forbidden"
  | "sandbox_capability_denied"
  | "sandbox_escape_attempt"
  | "workspace_membership_required"
  | "credential_not_found"
  | "interrupt_not_found"
  | "not_found"
  | "pack_version_not_found"
  | "replay_source_missing"
  | "signature_not_available"
  | "protocol_version_unsupported"
  | "connection_provider_conflict"
  | "envelope_correlation_conflict"
  | "idempotency_in_flight"
  | "idempotency_key_mismatch"
  | "interrupt_already_resolved"
  | "pack_dependency_conflict"
  | "pack_integrity_mismatch"
  | "replay_diverged_at_refusal"
  | "replay_memory_snapshot_unavailable"
  | "run_already_active"
  | "run_terminal"
  | "run_state_conflict"
  | "version_conflict"
  | "workspace_conflict"
  | "interrupt_cancelled"
  | "interrupt_expired"
  | "payload_too_large"
  | "workspace_too_large"
  | "unsupported_media_type"
  | "capability_not_provided"
  | "capability_required"
  | "credential_required"
  | "envelope_invalid"
  | "envelope_refusal"
  | "envelope_truncation_unrecoverable"
  | "fork_point_invalid"
  | "loop_limit_exceeded"
  | "mcp_mrtr_rounds_exceeded"
  | "pack_runtime_requirement_unmet"
  | "recursion_limit_exceeded"
  | "residency_unavailable"
  | "run_timeout"
  | "sandbox_memory_exceeded"
  | "sandbox_timeout"
  | "token_budget_exceeded"
  | "client_version_unsupported"
  | "rate_limited"
  | "event_type_unmapped"
  | "payload_unprojectable"
  | "internal_error"
  | "pack_load_failure"
  | "credential_unavailable"
  | "pack_registry_unreachable"
  | "runner_unavailable"
  | "unknown_envelope_kind"
  | "unknown_schema_version"
  | "approval_rejected"
  | "budget_exhausted"
  | "budget_model_denied"
  | "conversation_roster_exceeded"
  | "conversation_speaker_not_participant"
  | "egress_denied"
  | "eval_gate_unmet"
  | "host_event_resync_required"
  | "mcp_error"
  | "node_config_invalid"
  | "proposal_install_conflict"
  | "proposal_stale"
  | "proposal_state_conflict"
  | "provider_policy_denied"
  | "replay_context_summary_unavailable"
  | "run_expired"
  | "sandbox_invocation_error"
  | "service_unavailable"
  | "storage_limit_exceeded"
  | "upstream_unavailable";
/**
 * A vendor error code `<org>.<code>`; `openwop.` is reserved.
 */
export type VendorErrorCode = string;
/**
 * A tenant-bound run id, `<tenantId>/<opaque>`.
 */
export type RunId = string;
/**
 * An author-chosen id (agentId, workflowId, nodeId): 1 to 128 characters of `A-Z a-z 0-9 . _ ~ : -`.
 */
export type AuthorId = string;
/**
 * A host-minted opaque event id: 16 to 128 characters of `A-Z a-z 0-9 . _ ~ -`.
 */
export type EventId = string;
/**
 * An event type OpenWOP v2 registers.
 */
export type RegisteredEventType =
  | "agent.decided"
  | "agent.handoff"
  | "agent.invocation-completed"
  | "agent.invocation-started"
  | "agent.memory-consolidated"
  | "agent.prompt-resolved"
  | "agent.reasoned"
  | "agent.reasoning-delta"
  | "agent.tool-called"
  | "agent.tool-returned"
  | "agent.verified"
  | "approval.granted"
  | "approval.overridden"
  | "approval.received"
  | "approval.rejected"
  | "approval.requested"
  | "artifact.created"
  | "authorization.decided"
  | "budget.consumed"
  | "budget.exhausted"
  | "budget.reserved"
  | "budget.threshold-crossed"
  | "cap.breached"
  | "channel.presence"
  | "channel.written"
  | "clarification.requested"
  | "clarification.resolved"
  | "commitment.fired"
  | "compensation.completed"
  | "compensation.failed"
  | "compensation.manual-intervention-required"
  | "compensation.paused"
  | "compensation.requested"
  | "compensation.started"
  | "connector.auth-expired"
  | "connector.authorized"
  | "context.summarized"
  | "conversation.closed"
  | "conversation.exchanged"
  | "conversation.opened"
  | "deployment.canary-adjusted"
  | "deployment.promoted"
  | "deployment.rolled-back"
  | "deployment.state-changed"
  | "dispatch.fanned-out"
  | "dispatch.joined"
  | "egress.decided"
  | "envelope.nl-to-format-engaged"
  | "envelope.recovery-applied"
  | "envelope.refusal"
  | "envelope.retry-attempted"
  | "envelope.retry-exhausted"
  | "envelope.truncated"
  | "eval.completed"
  | "eval.scored"
  | "eval.started"
  | "goal.closed"
  | "goal.evaluated"
  | "import.applied"
  | "interrupt.requested"
  | "interrupt.resolved"
  | "lease.acquired"
  | "lease.handed-off"
  | "lease.lost"
  | "lease.renewed"
  | "log.appended"
  | "memory.compacted"
  | "memory.written"
  | "model.capability-insufficient"
  | "model.capability-substituted"
  | "negotiation.decided"
  | "node.cancelled"
  | "node.completed"
  | "node.dispatched"
  | "node.failed"
  | "node.resumed"
  | "node.retried"
  | "node.skipped"
  | "node.started"
  | "node.suspend-failed"
  | "node.suspended"
  | "orchestrator.decided"
  | "output.chunk"
  | "prompt.composed"
  | "proposal.activated"
  | "proposal.created"
  | "provider.usage"
  | "replay.diverged"
  | "replay.diverged-at-refusal"
  | "roster.run-initiated"
  | "run.cancelled"
  | "run.completed"
  | "run.dead-lettered"
  | "run.failed"
  | "run.paused"
  | "run.restored-from-snapshot"
  | "run.resume-started"
  | "run.resumed"
  | "run.started"
  | "tool.session-closed"
  | "tool.session-opened"
  | "trigger.delivery-attempted"
  | "trigger.subscription-state-changed"
  | "variable.changed"
  | "version.pinned"
  | "voice.barge-in"
  | "voice.cancelled"
  | "voice.endpoint-candidate"
  | "voice.speech-start"
  | "voice.synthesis-chunk"
  | "voice.transcript"
  | "voice.turn-commit"
  | "workflow-chain.confidence-escalated"
  | "workflow-chain.event"
  | "workflow.loopback-limit"
  | "workflow.restored"
  | "workflow.stalled"
  | "workspace.updated";
/**
 * A vendor event type `<org>.<name>[.<name>]`: its first segment is neither `openwop` nor a registered domain.
 */
export type VendorEventType = string;
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;
/**
 * A model class a suite may be run against.
 */
export type ModelClass = "reasoning" | "writing" | "coding" | "research" | "classification" | "general";
/**
 * An eval mode. `live-shadow` ignores fixtures and runs every tool live.
 */
export type EvalMode = "golden" | "rubric" | "adversarial" | "regression" | "live-shadow";
/**
 * A tenant id; `anon:` is the one prefix allowed, for anonymous tenants.
 */
export type TenantId = string;
export type WorkspaceId = string;
/**
 * Issuer-scoped, opaque, never personal data.
 */
export type SubjectId = string;

/**
 * The generated types: `Documents` by kind, `Definitions` by title.
 */
export interface ToolcallSpecTypes {
  documents: Documents;
  definitions: Definitions;
}
/**
 * Each document kind and its type.
 */
export interface Documents {
  "ingest-answer": IngestAnswer;
  "ingest-batch": IngestBatch;
  "tool-call-event": ToolCallEvent;
  capabilities: DiscoveryDocument;
  "error-envelope": ErrorEnvelope;
  "eval-summary": EvalSummary;
  "run-event": RunEvent;
  "call-tool-result": CallToolResult;
  suite: AgentEvalSuite;
}
/**
 * What ingest answers for a batch: the HTTP status it sends, how many events it accepted and rejected, for each rejected event its index in the batch as sent with its issues (`path: message`), for each accepted event ingest changed its index with what changed (`warnings`), and what it ignored beside the events (`envelopeWarnings`). `accepted + rejected` equals the events sent.
 */
export interface IngestAnswer {
  /**
   * 200 all accepted, 207 some rejected, 400 all rejected or a malformed batch, 413 body too large.
   */
  status: 200 | 207 | 400 | 413;
  accepted: number;
  rejected: number;
  errors: EventRejection[];
  warnings?: EventWarning[];
  /**
   * What ingest ignored in the batch beside its events (`path: message`): a member the batch schema does not name, or a known one whose value does not fit it. Such a member never rejects an event.
   */
  envelopeWarnings?: string[];
  error?: BatchError;
  requestId?: string;
}
export interface EventRejection {
  /**
   * Position of the event in the batch as sent (for a JSONL stream: among its events, blank lines not counted).
   */
  index: number;
  /**
   * For a JSONL stream: the 1-based line number of the event.
   */
  line?: number;
  /**
   * @minItems 1
   */
  issues: [string, ...string[]];
}
/**
 * A change ingest made to an event it accepted (a cut over-long text, a dropped unknown member, a missing category set to `unknown`, error members dropped from a success), as `path: message`.
 */
export interface EventWarning {
  /**
   * Position of the event in the batch as sent (for a JSONL stream: among its events).
   */
  index: number;
  /**
   * For a JSONL stream: the 1-based line number of the event.
   */
  line?: number;
  message: string;
}
/**
 * Why the batch as a whole was refused (400 or 413).
 */
export interface BatchError {
  code: string;
  message: string;
}
/**
 * The body an SDK posts to an ingest endpoint: 1 to 1,000 analytics events. Ingest validates each event on its own, so one bad event never rejects the others; a member beside `events` that this schema does not allow is ignored with a warning, never a reason to reject the events.
 */
export interface IngestBatch {
  /**
   * @minItems 1
   * @maxItems 1000
   */
  events: [ToolCallEvent, ...ToolCallEvent[]];
  sdk_version?: string;
  sent_at?: Timestamp;
}
/**
 * An analytics `tool_call` event: the base fields every analytics event carries, then the tool call's fields. `error_category` and `error_message` appear only on `status: error`, and `status: error` always names a category.
 */
export interface ToolCallEvent {
  event_id: Uuid;
  /**
   * The event type; this schema covers `tool_call`.
   */
  event_type: "tool_call";
  trace_id: string;
  session_id: string;
  timestamp: Timestamp;
  source: "server" | "widget";
  /**
   * The tool's name.
   */
  event_name?: string;
  metadata?: {
    [k: string]: unknown | undefined;
  };
  user_id?: string;
  platform?: string;
  sdk_version?: string;
  /**
   * Set by ingest from the authenticated key.
   */
  workspace_id?: string;
  /**
   * Set by ingest from the authenticated key.
   */
  project_id?: string;
  ingested_at?: Timestamp;
  /**
   * Wall time of the tool handler. Absent when the call failed before the handler ran.
   */
  latency_ms?: number;
  status?: "success" | "error";
  /**
   * `tool_error`: the tool returned a result with `isError: true`. `unknown`: the handler raised. `validation`: the call failed before the handler ran.
   */
  error_category?: "auth" | "validation" | "timeout" | "rate_limit" | "server" | "unknown" | "tool_error";
  /**
   * PII-stripped error text, at most 500 characters (MAX_ERROR_MESSAGE_LENGTH).
   */
  error_message?: string;
  /**
   * 1 when the call is a retry of an earlier call.
   */
  is_retry?: number;
  input_keys?: {
    [k: string]: unknown | undefined;
  };
  input_types?: {
    [k: string]: unknown | undefined;
  };
  input_values?: {
    [k: string]: unknown | undefined;
  };
  output_content?: {
    [k: string]: unknown | undefined;
  };
  intent_signals?: {
    [k: string]: unknown | undefined;
  };
  /**
   * At most 2^63 - 1, what a store's 64-bit integer column holds.
   */
  tokens_in?: number;
  /**
   * At most 2^63 - 1, what a store's 64-bit integer column holds.
   */
  tokens_out?: number;
  country_code?: string;
  locale?: string;
  end_user_agent?: string;
  subject_id?: string;
}
/**
 * What an OpenWOP v2 host advertises at `/.well-known/openwop`: protocol versions, metadata, and capability family records. The root is closed to the members OpenWOP v2 defines. The presence of a record is the claim (RFC 0031: advertise only what you implement).
 */
export interface DiscoveryDocument {
  /**
   * The v1 twin of `preferredVersion`, kept during the overlap.
   */
  protocolVersion?: string;
  /**
   * Every `<major>.<minor>` the host serves, e.g. `["2.0"]`.
   *
   * @minItems 1
   */
  protocolVersions: [string, ...string[]];
  /**
   * The version the host serves when a request names none; a member of `protocolVersions`.
   */
  preferredVersion: string;
  extensions?: Extensions;
  implementation?: Implementation;
  /**
   * Engine version of the host.
   */
  engineVersion?: number;
  /**
   * The event-log era; a v2 host writes 3.
   */
  eventLogSchemaVersion?: number;
  conformance?: ConformanceMetadata;
  /**
   * Conformance fixture ids the host has seeded (e.g. `conformance-eval-fixture-error`). Unknown ids are tolerated.
   */
  fixtures?: string[];
  /**
   * OpenWOP v2 metadata member `configurable`; this package does not interpret it and leaves it unchecked.
   */
  configurable?: unknown;
  /**
   * OpenWOP v2 metadata member `observability`; this package does not interpret it and leaves it unchecked.
   */
  observability?: unknown;
  /**
   * OpenWOP v2 metadata member `minClientVersion`; this package does not interpret it and leaves it unchecked.
   */
  minClientVersion?: unknown;
  /**
   * OpenWOP v2 metadata member `runtimeCapabilities`; this package does not interpret it and leaves it unchecked.
   */
  runtimeCapabilities?: unknown;
  /**
   * OpenWOP v2 metadata member `testing`; this package does not interpret it and leaves it unchecked.
   */
  testing?: unknown;
  /**
   * OpenWOP v2 metadata member `compliance`; this package does not interpret it and leaves it unchecked.
   */
  compliance?: unknown;
  /**
   * OpenWOP v2 metadata member `signingKeys`; this package does not interpret it and leaves it unchecked.
   */
  signingKeys?: unknown;
  /**
   * OpenWOP v2 metadata member `discovery`; this package does not interpret it and leaves it unchecked.
   */
  discovery?: unknown;
  agents?: AgentsFamily;
  toolHooks?: ToolHooksFamily;
  supportedEnvelopes?: CapabilityRecord;
  schemaVersions?: CapabilityRecord;
  limits?: CapabilityRecord;
  envelopeStrictness?: CapabilityRecord;
  envelopeContracts?: CapabilityRecord;
  envelopes?: CapabilityRecord;
  prompts?: CapabilityRecord;
  nodePackRuntimes?: CapabilityRecord;
  secrets?: CapabilityRecord;
  connections?: CapabilityRecord;
  selfHostedRunner?: CapabilityRecord;
  purposePropagation?: CapabilityRecord;
  dataResidency?: CapabilityRecord;
  anonymousActor?: CapabilityRecord;
  credentials?: CapabilityRecord;
  feedback?: CapabilityRecord;
  replay?: CapabilityRecord;
  oauth?: CapabilityRecord;
  authorization?: CapabilityRecord;
  multiPartyConversation?: CapabilityRecord;
  conversationTurnModelProvenance?: CapabilityRecord;
  channelPresence?: CapabilityRecord;
  multiAgent?: CapabilityRecord;
  modelCapabilities?: CapabilityRecord;
  providerUsage?: CapabilityRecord;
  aiProviders?: CapabilityRecord;
  memory?: CapabilityRecord;
  conversationPrimitive?: CapabilityRecord;
  subWorkflow?: CapabilityRecord;
  fs?: CapabilityRecord;
  kvStorage?: CapabilityRecord;
  tableStorage?: CapabilityRecord;
  queueBus?: CapabilityRecord;
  scheduling?: CapabilityRecord;
  heartbeat?: CapabilityRecord;
  toolCatalog?: CapabilityRecord;
  httpClient?: CapabilityRecord;
  artifactTypes?: CapabilityRecord;
  forms?: CapabilityRecord;
  aiEnvelope?: CapabilityRecord;
  promptLibrary?: CapabilityRecord;
  agentRuntime?: CapabilityRecord;
  deadLetter?: CapabilityRecord;
  webhooks?: CapabilityRecord;
  triggerBridge?: CapabilityRecord;
  a2a?: CapabilityRecord;
  budget?: CapabilityRecord;
  nondeterminismPolicy?: CapabilityRecord;
  workspace?: CapabilityRecord;
  uiPlugins?: CapabilityRecord;
  sql?: CapabilityRecord;
  nosql?: CapabilityRecord;
  vectorStore?: CapabilityRecord;
  searchIndex?: CapabilityRecord;
  blobStorage?: CapabilityRecord;
  cache?: CapabilityRecord;
  workflowChainPacks?: CapabilityRecord;
  packs?: CapabilityRecord;
  mcp?: CapabilityRecord;
  sandbox?: CapabilityRecord;
  compensation?: CapabilityRecord;
  idempotency?: CapabilityRecord;
  eventLog?: CapabilityRecord;
  production?: CapabilityRecord;
  auth?: CapabilityRecord;
  i18n?: CapabilityRecord;
  content?: CapabilityRecord;
  portability?: CapabilityRecord;
  runList?: CapabilityRecord;
  interrupt?: CapabilityRecord;
  auditLogIntegrity?: CapabilityRecord;
  hostEvents?: CapabilityRecord;
}
/**
 * Vendor and host extensions, one open record per `<org>.<name>` key.
 */
export interface Extensions {
  /**
   * This interface was referenced by `Extensions`'s JSON-Schema definition
   * via the `patternProperty` "^[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9]*(-[a-z0-9]+)*$".
   */
  [k: string]:
    | {
        [k: string]: unknown | undefined;
      }
    | undefined;
}
/**
 * Self-reported server identity; informational.
 */
export interface Implementation {
  name?: string;
  version?: string;
  vendor?: string;
  url?: string;
}
/**
 * Conformance-only metadata.
 */
export interface ConformanceMetadata {
  /**
   * The host registered `core.conformance.mock-agent`.
   */
  mockAgent?: boolean;
  certificationBundleUrl?: string;
  /**
   * The host serves the OpenWOP conformance seams profile; the one value OpenWOP v2 defines.
   */
  seamsProfile?: "openwop-conformance-seams-v2";
}
/**
 * `agents.evalSuite`: the host runs eval suites (RFC 0081), with the members RFC 0244, 0245, 0251 and 0252 add.
 */
export interface EvalSuiteCapability {
  /**
   * Eval modes the host runs.
   */
  modes?: ("golden" | "rubric" | "adversarial" | "regression" | "live-shadow")[];
  maxTasksPerSuite?: number;
  maxCostUsdPerSuite?: number;
  /**
   * `true`: the host matches fixture entries on `args`/`argsMatch` (RFC 0244 §D). A suite using them on a host without it is refused at run create.
   */
  fixtureMatching?: boolean;
  /**
   * `true`: the host serves `isError: true` entries as tool errors and records them as errors (RFC 0245 §B). A suite with such an entry on a host without it is refused with `400 validation_error` naming the field (§C).
   */
  fixtureErrors?: boolean;
  /**
   * `true`: `POST /runs` takes `evalModes` and `baselineRunId` (RFC 0251).
   */
  baselineSelection?: boolean;
  /**
   * `true`: `POST /runs` takes `fixtureRuns`, turning a finished run's recorded tool calls into a task's fixtures (RFC 0252).
   */
  recordedFixtures?: boolean;
}
/**
 * The flat OpenWOP error envelope a host answers with, e.g. `400 validation_error` at run create. Context such as the offending path lives under `details` (`details.field`).
 */
export interface ErrorEnvelope {
  /**
   * A registered OpenWOP v2 error code such as `validation_error`, or a vendor code `<org>.<code>` such as `toolcall-spec.tool_failed`.
   */
  error: RegisteredErrorCode | VendorErrorCode;
  message: string;
  details?: ErrorDetails;
}
/**
 * Context of the error. `field` names the offending member in `tasks[0].fixtures.toolResponses[0].isError` form. A details object shaped like one of the three code-specific details of OpenWOP (`supported`, `runStatus`, or a closed `{type, keys}`) is refused: upstream's `oneOf` also admits every object as generic details, so such an object matches two branches.
 */
export interface ErrorDetails {
  field?: string;
  [k: string]: unknown | undefined;
}
/**
 * The result of an eval run (RFC 0081), with the fixture miss count of RFC 0244 in total and per task. Carries no suite content.
 */
export interface EvalSummary {
  /**
   * The suite scored, as in the suite's `suiteId`.
   */
  suiteId: string;
  /**
   * The suite version the run executed.
   */
  suiteVersion: string;
  evaluatedModelClass?: "reasoning" | "writing" | "coding" | "research" | "classification" | "general";
  aggregateScore: number;
  passed: boolean;
  taskCount: number;
  passedCount: number;
  totalCostUsd?: number;
  /**
   * Tool calls, over all tasks, that matched no fixture entry. A served entry, `isError` or not, is never a miss.
   */
  fixtureMissCount?: number;
  regression?: Regression;
  tasks: TaskSummary[];
  /**
   * Node ids whose outputs were pinned for the run; ids only, never the pinned values.
   */
  pinnedNodeIds?: AuthorId[];
}
export interface Regression {
  baselineRunId: RunId;
  scoreDelta: number;
  diffRef?: string;
}
export interface TaskSummary {
  taskId: string;
  score: number;
  passed: boolean;
  costUsd?: number;
  latencyMs?: number;
  schemaValid?: boolean;
  /**
   * This task's calls that matched no fixture entry.
   */
  fixtureMissCount?: number;
  safetyFindings?: SafetyFinding[];
}
export interface SafetyFinding {
  kind: string;
  severity: "low" | "medium" | "high" | "critical";
}
/**
 * One event of a run's append-only event log (OpenWOP v2 envelope, closed). The payload of the types this package knows is checked against its schema; other registered and vendor types keep an open object payload.
 */
export interface RunEvent {
  /**
   * Unique id of the event, host-minted and opaque.
   */
  eventId: EventId;
  /**
   * The run the event belongs to, `<tenantId>/<opaque>`.
   */
  runId: RunId;
  /**
   * The node a node-scoped event belongs to.
   */
  nodeId?: AuthorId;
  /**
   * A registered OpenWOP v2 event type (kebab-case, e.g. `agent.tool-returned`) or a vendor type `<org>.<name>` whose first segment is neither `openwop` nor a registered domain (e.g. `toolcall-spec.eval.task-failed`).
   */
  type: RegisteredEventType | VendorEventType;
  /**
   * The event's payload; see the per-type schemas.
   */
  payload: {
    [k: string]: unknown | undefined;
  };
  /**
   * When the event was appended.
   */
  timestamp: Timestamp;
  /**
   * The one ordering field; the first event is 0.
   */
  sequence: number;
  schemaVersion: number;
  engineVersion?: number;
  /**
   * The eventId of the event that caused this one.
   */
  causationId?: EventId;
}
/**
 * An MCP `tools/call` result. The result is a tool error exactly when `isError` is the JSON boolean `true`. Like MCP's own schema, result and content objects stay open to members added by later protocol versions.
 */
export interface CallToolResult {
  /**
   * What the model sees. For an error, the text describes the failure.
   */
  content: ContentBlock[];
  /**
   * Structured output matching the tool's output schema.
   */
  structuredContent?: {
    [k: string]: unknown | undefined;
  };
  /**
   * `true`: the tool reports that the call failed.
   */
  isError?: boolean;
  _meta?: {
    [k: string]: unknown | undefined;
  };
  [k: string]: unknown | undefined;
}
export interface TextContent {
  type: "text";
  text: string;
  annotations?: Annotations;
  _meta?: {
    [k: string]: unknown | undefined;
  };
  [k: string]: unknown | undefined;
}
export interface Annotations {
  audience?: ("user" | "assistant")[];
  priority?: number;
  lastModified?: string;
  [k: string]: unknown | undefined;
}
export interface ImageContent {
  type: "image";
  /**
   * Base64-encoded image data.
   */
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: {
    [k: string]: unknown | undefined;
  };
  [k: string]: unknown | undefined;
}
export interface AudioContent {
  type: "audio";
  /**
   * Base64-encoded audio data.
   */
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: {
    [k: string]: unknown | undefined;
  };
  [k: string]: unknown | undefined;
}
export interface ResourceLink {
  type: "resource_link";
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Annotations;
  _meta?: {
    [k: string]: unknown | undefined;
  };
  [k: string]: unknown | undefined;
}
export interface EmbeddedResource {
  type: "resource";
  resource: ResourceContents;
  annotations?: Annotations;
  _meta?: {
    [k: string]: unknown | undefined;
  };
  [k: string]: unknown | undefined;
}
/**
 * Text (`text`) or binary (`blob`, base64) contents of a resource: exactly one of the two.
 */
export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: {
    [k: string]: unknown | undefined;
  };
  [k: string]: unknown | undefined;
}
/**
 * An OpenWOP v2 agent eval suite (RFC 0081) whose tasks may replay recorded tool responses (RFC 0244 §D), recorded tool errors included (RFC 0245).
 */
export interface AgentEvalSuite {
  /**
   * Stable suite identifier, e.g. `core.openwop.evals.support-resolver`.
   */
  suiteId: string;
  /**
   * Semantic version of the suite.
   */
  version: string;
  /**
   * The agent the suite evaluates (an OpenWOP agentId).
   */
  targetAgentId?: AuthorId;
  /**
   * Model classes the suite may be run against.
   */
  allowedModels?: ModelClass[];
  /**
   * Modes the suite declares. A run may only request a declared mode.
   *
   * @minItems 1
   */
  modes: [EvalMode, ...EvalMode[]];
  thresholds?: Thresholds;
  /**
   * The tasks of the suite, run in order.
   *
   * @minItems 1
   */
  tasks: [EvalTask, ...EvalTask[]];
}
/**
 * Pass thresholds for the whole suite.
 */
export interface Thresholds {
  passScore?: number;
  maxCostUsd?: number;
  maxP95LatencyMs?: number;
}
/**
 * One task: the agent's input, what is expected of it, and the fixtures that answer its tool calls.
 */
export interface EvalTask {
  taskId: string;
  /**
   * The agent's input, opaque to the suite.
   */
  input: unknown;
  expected: Expected;
  fixtures?: Fixtures;
}
/**
 * How the task's output is scored.
 */
export interface Expected {
  kind: "golden" | "rubric";
  match?: Match;
  /**
   * @minItems 1
   */
  rubric?: [RubricCriterion, ...RubricCriterion[]];
}
/**
 * A golden match: `exact` (equal JSON values), `contains` (substring of the output's text) or `json-match` (every member of `value` present with an equal value).
 */
export interface Match {
  strategy: "exact" | "contains" | "json-match";
  /**
   * The expected value.
   */
  value: unknown;
}
export interface RubricCriterion {
  criterion: string;
  weight: number;
}
/**
 * Recorded tool responses that answer the agent's tool calls during replay (RFC 0244 §D).
 */
export interface Fixtures {
  /**
   * Entries in declaration order. The first unconsumed entry that names the tool and matches the call is served and consumed.
   */
  toolResponses?: ToolResponse[];
  /**
   * What a call that matches no entry gets: a tool error (`fail`, the default) or the live tool (`live`). `error` is this package's 0.1 spelling of `fail`: still accepted, deprecated, and reported with a warning.
   */
  onMiss?: "fail" | "live" | "error";
  /**
   * Memory entries seeded before the task runs, opaque to this package.
   */
  memorySeed?: {
    [k: string]: unknown | undefined;
  }[];
}
/**
 * One recorded tool response. With `isError: true` it records a failed call and is served as a tool error (RFC 0245).
 */
export interface ToolResponse {
  /**
   * The tool this entry answers, in `<scope>:<tool-id>` form, e.g. `billing:lookup`.
   */
  tool: string;
  /**
   * Arguments the call must carry. Without `args` the entry matches any call of the tool.
   */
  args?: {
    [k: string]: unknown | undefined;
  };
  /**
   * `exact`: the call's arguments equal `args` as JSON values. `subset`: every member of `args` is in the call with an equal value. Only allowed with `args`.
   */
  argsMatch?: "exact" | "subset";
  /**
   * The recorded payload, opaque. With `isError: true` it is the error payload the failing tool returned.
   */
  response?: unknown;
  /**
   * `true` records a failed call: the host serves it as a tool error and records `agent.tool-returned` with `error` and no `outcome`. Only the JSON boolean `true` counts.
   */
  isError?: boolean;
}
/**
 * Every titled definition of the schemas, by title.
 */
export interface Definitions {
  EventRejection: EventRejection;
  EventWarning: EventWarning;
  BatchError: BatchError;
  Extensions: Extensions;
  Implementation: Implementation;
  ConformanceMetadata: ConformanceMetadata;
  CapabilityStatus: CapabilityStatus;
  Witness: Witness;
  RecordLifetime: RecordLifetime;
  CapabilityRecord: CapabilityRecord;
  AgentsFamily: AgentsFamily;
  EvalSuiteCapability: EvalSuiteCapability;
  ToolHooksFamily: ToolHooksFamily;
  Timestamp: Timestamp;
  Uuid: Uuid;
  EventId: EventId;
  RunId: RunId;
  TenantId: TenantId;
  WorkspaceId: WorkspaceId;
  SubjectId: SubjectId;
  AuthorId: AuthorId;
  Owner: Owner;
  Subject: Subject;
  Actor1: Actor1;
  Actor2: Actor2;
  Actor3: Actor3;
  Actor4: Actor4;
  RegisteredErrorCode: RegisteredErrorCode;
  VendorErrorCode: VendorErrorCode;
  ErrorDetails: ErrorDetails;
  Regression: Regression;
  TaskSummary: TaskSummary;
  SafetyFinding: SafetyFinding;
  ErrorObject: ErrorObject;
  RunStarted: RunStarted;
  RunCompleted: RunCompleted;
  RunFailed: RunFailed;
  AgentToolCalled: AgentToolCalled;
  AgentToolReturned: AgentToolReturned;
  EvalStarted: EvalStarted;
  EvalScored: EvalScored;
  EvalCompleted: EvalCompleted;
  RegisteredEventType: RegisteredEventType;
  VendorEventType: VendorEventType;
  ContentBlock: ContentBlock;
  Annotations: Annotations;
  TextContent: TextContent;
  ImageContent: ImageContent;
  AudioContent: AudioContent;
  ResourceLink: ResourceLink;
  EmbeddedResource: EmbeddedResource;
  ResourceContents: ResourceContents;
  ModelClass: ModelClass;
  EvalMode: EvalMode;
  Thresholds: Thresholds;
  EvalTask: EvalTask;
  Expected: Expected;
  Match: Match;
  RubricCriterion: RubricCriterion;
  Fixtures: Fixtures;
  ToolResponse: ToolResponse;
}
/**
 * The owner of a run (RFC 0170 §A.1), echoed by `run.started`.
 */
export interface Owner {
  tenant: TenantId;
  workspace?: WorkspaceId;
  subject: Subject;
}
/**
 * The subject that owns a run. An anonymous subject is on the anonymous lane and only there.
 */
export interface Subject {
  /**
   * The trust root that vouches for the subject.
   */
  issuer: string;
  subjectId: SubjectId;
  tenant: TenantId;
  /**
   * How the subject authenticated.
   */
  lane: "api-key" | "oauth2" | "oidc" | "mtls" | "saml" | "scim" | "ldap" | "workload" | "session" | "anonymous";
  kind: "user" | "agent" | "anonymous" | "workload";
  /**
   * Required on the `saml` and `scim` lanes, absent on every other lane.
   */
  keyClass?: "opaque-idp" | "configured-immutable";
  /**
   * Who acts on the subject's behalf; the chain is at most four actors deep.
   */
  actor?: Actor1;
}
/**
 * The first actor of a subject's chain.
 */
export interface Actor1 {
  /**
   * The trust root that vouches for the subject.
   */
  issuer: string;
  subjectId: SubjectId;
  tenant: TenantId;
  /**
   * How the subject authenticated.
   */
  lane: "api-key" | "oauth2" | "oidc" | "mtls" | "saml" | "scim" | "ldap" | "workload" | "session" | "anonymous";
  kind: "user" | "agent" | "anonymous" | "workload";
  /**
   * Required on the `saml` and `scim` lanes, absent on every other lane.
   */
  keyClass?: "opaque-idp" | "configured-immutable";
  /**
   * Who acts on the subject's behalf; the chain is at most four actors deep.
   */
  actor?: Actor2;
}
/**
 * The second actor of a subject's chain.
 */
export interface Actor2 {
  /**
   * The trust root that vouches for the subject.
   */
  issuer: string;
  subjectId: SubjectId;
  tenant: TenantId;
  /**
   * How the subject authenticated.
   */
  lane: "api-key" | "oauth2" | "oidc" | "mtls" | "saml" | "scim" | "ldap" | "workload" | "session" | "anonymous";
  kind: "user" | "agent" | "anonymous" | "workload";
  /**
   * Required on the `saml` and `scim` lanes, absent on every other lane.
   */
  keyClass?: "opaque-idp" | "configured-immutable";
  /**
   * Who acts on the subject's behalf; the chain is at most four actors deep.
   */
  actor?: Actor3;
}
/**
 * The third actor of a subject's chain.
 */
export interface Actor3 {
  /**
   * The trust root that vouches for the subject.
   */
  issuer: string;
  subjectId: SubjectId;
  tenant: TenantId;
  /**
   * How the subject authenticated.
   */
  lane: "api-key" | "oauth2" | "oidc" | "mtls" | "saml" | "scim" | "ldap" | "workload" | "session" | "anonymous";
  kind: "user" | "agent" | "anonymous" | "workload";
  /**
   * Required on the `saml` and `scim` lanes, absent on every other lane.
   */
  keyClass?: "opaque-idp" | "configured-immutable";
  /**
   * Who acts on the subject's behalf; the chain is at most four actors deep.
   */
  actor?: Actor4;
}
/**
 * The fourth and last actor of a subject's chain.
 */
export interface Actor4 {
  /**
   * The trust root that vouches for the subject.
   */
  issuer: string;
  subjectId: SubjectId;
  tenant: TenantId;
  /**
   * How the subject authenticated.
   */
  lane: "api-key" | "oauth2" | "oidc" | "mtls" | "saml" | "scim" | "ldap" | "workload" | "session" | "anonymous";
  kind: "user" | "agent" | "anonymous" | "workload";
  /**
   * Required on the `saml` and `scim` lanes, absent on every other lane.
   */
  keyClass?: "opaque-idp" | "configured-immutable";
}
/**
 * An error carried on an event: a registered or vendor code and a short message.
 */
export interface ErrorObject {
  /**
   * A non-empty code; this package writes registered or vendor codes (`<org>.<code>`).
   */
  code: string;
  /**
   * A short human-readable message.
   */
  message: string;
  details?: {
    [k: string]: unknown | undefined;
  };
  retryable?: boolean;
}
/**
 * Payload of `run.started`, the first event of a run: what runs, and its owner.
 */
export interface RunStarted {
  workflowId: AuthorId;
  /**
   * The run's inputs.
   */
  inputs?: {
    [k: string]: unknown | undefined;
  };
  transport?: "rest" | "mcp" | "a2a" | "ui";
  engineVersion?: number;
  owner?: Owner;
  tags?: string[];
  metadata?: {
    [k: string]: unknown | undefined;
  };
}
/**
 * Payload of `run.completed`, the last event of a run that succeeded. `outputs` is required; an empty object is a valid value.
 */
export interface RunCompleted {
  /**
   * The run's outputs, by name.
   */
  outputs: {
    [k: string]: unknown | undefined;
  };
  durationMs?: number;
}
/**
 * Payload of `run.failed`, the last event of a run that failed.
 */
export interface RunFailed {
  error: ErrorObject;
  failedNodeId?: AuthorId;
  durationMs?: number;
}
/**
 * Payload of `agent.tool-called`: the agent called a tool.
 */
export interface AgentToolCalled {
  agentId: AuthorId;
  toolName: string;
  /**
   * Pairs this event with its `agent.tool-returned`.
   */
  callId: string;
  /**
   * The call's arguments.
   */
  inputs?: unknown;
  /**
   * SHA-256 of the RFC 8785 canonical JSON of the arguments (tool hooks); this package writes it as 64 lowercase hex digits.
   */
  argsHash?: string;
  /**
   * The principal the call is attributed to (tool hooks).
   */
  principal?: string;
  transport?: "mcp" | "http" | "native";
  causationHostId?: string;
}
/**
 * Payload of `agent.tool-returned`. A failed call carries `error` and no `outcome`; `error` and `outcome` never appear together.
 */
export interface AgentToolReturned {
  agentId: AuthorId;
  toolName: string;
  callId: string;
  /**
   * The tool result of a successful call.
   */
  outcome?: unknown;
  error?: ErrorObject;
  /**
   * Only when the host advertises `toolHooks.prePostEvents`.
   */
  status?: "ok" | "error" | "forbidden" | "rate_limited";
  durationMs?: number;
  causationHostId?: string;
}
/**
 * Payload of `eval.started`. Carries no suite content.
 */
export interface EvalStarted {
  suiteId: string;
  suiteVersion: string;
  taskCount: number;
  modes: ("golden" | "rubric" | "adversarial" | "regression" | "live-shadow")[];
  baselineRunId?: RunId;
  /**
   * RFC 0252: the accepted `fixtureRuns` of the run create, echoed: each task id and the finished run whose recorded tool calls became that task's fixtures.
   */
  fixtureRuns?: {
    [k: string]: RunId | undefined;
  };
}
/**
 * Payload of `eval.scored`: one task's score.
 */
export interface EvalScored {
  taskId: string;
  score: number;
  passed: boolean;
  costUsd?: number;
  latencyMs?: number;
  schemaValid?: boolean;
  safetyFindingCount?: number;
}
/**
 * Payload of `eval.completed`: the run's aggregate.
 */
export interface EvalCompleted {
  aggregateScore: number;
  passed: boolean;
  taskCount: number;
  passedCount: number;
  regressionVsBaseline?: number;
}
