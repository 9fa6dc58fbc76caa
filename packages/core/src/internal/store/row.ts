/**
 * A token as a row of the table `rolecraft_approval_tokens`, shared by the
 * SQLite and SQL stores. Rows are keyed by the SHA-256 of the token id, so a
 * copy of the database does not hand out usable tokens.
 */
import type { Status, Token } from "./storage.ts"

// node:crypto takes tens of milliseconds to load: it is loaded by the first key, not at import
// (Node keeps the module once loaded).
const nodeCrypto = () => process.getBuiltinModule("node:crypto")

/** The table's name. */
export const table = "rolecraft_approval_tokens"

/** A row as a driver reads it. */
export interface Row {
  readonly key?: string
  readonly agent_id: string
  readonly action: string
  readonly tool: string | null
  readonly arguments_digest: string
  readonly reason: string
  readonly status: string
  readonly requested_at: number
  readonly expires_at: number
  readonly approver: string | null
  readonly decided_at: number | null
  readonly rejection: string | null
  readonly used_at: number | null
}

/** The key of a token's row: the SHA-256 (lower-case hex) of its id. */
export const keyOf = (tokenId: string): string => nodeCrypto().hash("sha256", tokenId, "hex")

const orUndefined = <A>(value: A | null): A | undefined => (value === null ? undefined : value)

/** The token of the row read for `id`. */
export const fromRow = (id: string, row: Row): Token => ({
  id,
  binding: {
    agentId: row.agent_id,
    action: row.action,
    tool: orUndefined(row.tool),
    argumentsDigest: row.arguments_digest
  },
  reason: row.reason,
  status: row.status as Status,
  // Drivers may read BIGINT columns as strings or bigints: times are numbers here.
  requestedAt: Number(row.requested_at),
  expiresAt: Number(row.expires_at),
  approver: orUndefined(row.approver),
  decidedAt: row.decided_at === null ? undefined : Number(row.decided_at),
  rejection: orUndefined(row.rejection),
  usedAt: row.used_at === null ? undefined : Number(row.used_at)
})
