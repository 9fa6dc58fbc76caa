/**
 * The explicit values a chat turn's parts share: what the agent hands its chat turns ({@link Host}), how a
 * turn is run ({@link Mode}), one running turn ({@link Turn}) and where it is ({@link Position}). Every part
 * of a turn is a top-level function of these; none holds state of its own.
 */
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import type * as Action from "../../Action.ts"
import type { ActionError, RetrievalFailure } from "../../ActionError.ts"
import type * as ApprovalStore from "../../ApprovalStore.ts"
import type { ChatEvent, Usage } from "../../Chat.ts"
import type * as LanguageModel from "../../LanguageModel.ts"
import type * as Prompt from "../../Prompt.ts"
import type * as Role from "../../Role.ts"
import type * as ThreadStore from "../../ThreadStore.ts"
import type * as Nesting from "../agent/nesting.ts"
import type * as EventHub from "../events/hub.ts"
import type { AgentRuntime } from "../executor/runtime.ts"
import type * as AuthorityKernel from "../pipeline/authority.ts"
import type * as Call from "../pipeline/call.ts"
import type * as Secrets from "../secrets.ts"
import type * as Toolkit from "../tool/toolkit.ts"
import type { Settings } from "./settings.ts"

/**
 * What `Agent.make` hands the chat turns: the agent's id and roles, its actions by name, compiled authority,
 * default approval store, the thread store provided where it was made (if any), event hub, per-agent runtime (MCP
 * connections), the credentials its actions read, how a call of one of its actions is made (`call`: one value,
 * once, where a model's tool call or a resumed pending call enters), and its pipeline (`run`, `proceed`).
 */
export interface Host<R> {
  readonly id: string
  readonly roles: ReadonlyArray<Role.Any>
  readonly actions: ReadonlyMap<string, { readonly action: Action.Any }>
  readonly authority: AuthorityKernel.Compiled
  readonly approvals: ApprovalStore.ApprovalStore["Service"]
  readonly threads: ThreadStore.ThreadStore["Service"] | undefined
  readonly hub: EventHub.Hub
  readonly runtime: AgentRuntime
  readonly secrets: Secrets.Read | undefined
  /** The call of the action `name` (and MCP tool `tool`) with parsed arguments. */
  readonly call: (
    name: string,
    tool: string | undefined,
    args: Readonly<Record<string, unknown>>,
    options: Call.Options
  ) => Call.Call
  /** Runs a call: its value, or the pending value of a call that pauses and needs an approval. */
  readonly run: (call: Call.Call) => Effect.Effect<unknown, ActionError | RetrievalFailure, R>
  /** Continues a call paused inside its run step, at that step, with its converted arguments. */
  readonly proceed: (call: Call.Call) => Effect.Effect<unknown, ActionError | RetrievalFailure, R>
}

/** Sends an event to the turn's caller. */
export type Emit = (event: ChatEvent) => Effect.Effect<void>

/** How a turn is run: whether its model calls stream, and where its events go. */
export interface Mode {
  readonly emit: Emit
  readonly emitAll: (events: ReadonlyArray<ChatEvent>) => Effect.Effect<void>
  /** Stream each model call (`chatStream`), or generate it (`chat`). */
  readonly streaming: boolean
  readonly argumentDeltas: boolean
}

/**
 * One running turn: its agent, its id and path, the toolkit builder of that agent, the turn's settings, model and usage
 * meter, the tokens spent before a pause (`prior`), the ids its calls have, every secret the agent knows
 * (read when the turn starts: its tool messages, events and spans are redacted of them), and its mode.
 */
export interface Turn<R> extends Mode {
  readonly host: Host<R>
  /**
   * The turn's id (`Chat.ChatOptions.turnId`, a resumed turn's paused state's, else a fresh one): with each
   * call's id, the scope of the approvals its calls ask for.
   */
  readonly id: string
  /** The agents the turn runs under, outermost first, ending with its own (`[host.id]` for a turn of its own). */
  readonly path: ReadonlyArray<string>
  readonly toolkit: (strict: boolean) => Effect.Effect<Toolkit.Toolkit>
  readonly settings: Settings
  readonly model: LanguageModel.LanguageModel["Service"]
  readonly meter: LanguageModel.UsageMeter["Service"]
  readonly prior: Usage
  /**
   * The ids of the conversation's tool calls so far: the history's, then each step's as the step ends (a
   * model call's new ids are checked against it; kept as the turn goes, not rebuilt from the messages).
   */
  readonly callIds: Set<string>
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
  /**
   * What the turn's calls of agents used as actions share: the bound of the tree of nested turns (the
   * enclosing turn's, or made by the first such call), and the tokens of each agent they ran so far.
   */
  readonly composed: Composed
}

/** See {@link Turn.composed}. */
export interface Composed {
  bound: Nesting.Bound | undefined
  /** The outermost turn of a tree (not nested): its own model calls count against the tree's bound. */
  readonly outermost: boolean
  /** The model calls the outermost turn made (counted before a bound exists, then in it too). */
  calls: number
  readonly agents: Record<string, Usage>
}

/** Where a turn is: the conversation so far and the model calls made (counted across an approval pause). */
export interface Position {
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly steps: number
}
