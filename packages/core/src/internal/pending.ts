/**
 * A call that waits for a person: what the approval step ends a call of a chat turn with, as a value — the
 * token asked for the call, the action's approval reason and the call's binding — with the APPROVAL failure a
 * direct caller gets instead. The call's span, metrics and events record it as that failure: the call did not
 * run ({@link observed}).
 */
import * as Exit from "effect/Exit"
import type { ApprovalRequired } from "../ActionError.ts"
import type * as ApprovalStore from "../ApprovalStore.ts"

/** What a person deciding an MCP tool's call is shown of the tool: its definition's digest and description. */
export interface Definition {
  readonly digest: string
  readonly description?: string
}

/** A call that waits for a decision on `tokenId` (see the module doc). */
export class Pending {
  readonly tokenId: string
  readonly reason: string
  readonly binding: ApprovalStore.Binding
  readonly error: ApprovalRequired
  /** For an MCP tool: the digest of its definition as listed when asked, and its description. */
  readonly definition: Definition | undefined
  constructor(
    tokenId: string,
    reason: string,
    binding: ApprovalStore.Binding,
    error: ApprovalRequired,
    definition?: Definition | undefined
  ) {
    this.tokenId = tokenId
    this.reason = reason
    this.binding = binding
    this.error = error
    this.definition = definition
  }
}

/** Whether a call's value is a pause, not a result. */
export const isPending = (value: unknown): value is Pending => value instanceof Pending

/** A call's exit as its span, metrics and events record it: a pause is its APPROVAL failure. */
export const observed = <A, E>(exit: Exit.Exit<A, E>): Exit.Exit<A, E | ApprovalRequired> =>
  Exit.isSuccess(exit) && exit.value instanceof Pending ? Exit.fail(exit.value.error) : exit
