/**
 * Tool call ids, assigned in one place. A model's id is a promise the rest
 * of a conversation relies on: each tool message answers exactly one call,
 * and a decision on a call that waits for an approval applies to exactly
 * that call. Models break it — some providers send `""` on every call,
 * others repeat an id within a response or reuse `call_1` on every turn — so
 * every path that turns a model's calls into actions (a chat turn, a resumed
 * turn, a history passed back in, a durable run) takes its ids from here:
 *
 * - a call keeps its id when the id is non-empty and not used before in the
 *   conversation;
 * - otherwise it gets a fresh one, `<id>_<step>_<index>` (`call_<step>_<index>`
 *   for an empty id), with `_<n>` added until no call of the conversation
 *   has it — unique in the whole conversation, never the function's name,
 *   and the same on a replay of the same conversation;
 * - the fresh id is used everywhere the call appears: the assistant message,
 *   the tool message answering it, the caller's events, a pending call.
 *
 * @example
 * ```ts
 * import { ToolCallId } from "@rolecraft/core"
 *
 * const ids = ToolCallId.make(["call_1"])
 * ids.assign("call_1", 2, 0) // "call_1_2_0": call_1 answers an earlier call
 * ids.assign("", 2, 1) // "call_2_1"
 * ids.assign("call_9", 2, 2) // "call_9"
 * ```
 *
 * @since 0.2.0
 */
import type * as Prompt from "./Prompt.ts"

/**
 * The ids of one conversation: `assign` gives the call at `index` of model
 * call `step` the id it is answered under (see the module doc) and records
 * it; `has` says whether a call of the conversation has an id.
 *
 * @category models
 * @since 0.2.0
 */
export interface Ids {
  readonly assign: (id: string, step: number, index: number) => string
  readonly has: (id: string) => boolean
}

/**
 * The ids of a conversation whose calls already have the ids `taken`. A
 * `Set` is read as it is, never copied or written (what a long turn passes,
 * step after step); any other iterable is copied.
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (taken: Iterable<string> = []): Ids => {
  const before: ReadonlySet<string> = taken instanceof Set ? taken : new Set(taken)
  const seen = new Set<string>()
  const has = (id: string) => before.has(id) || seen.has(id)
  return {
    assign: (id, step, index) => {
      let fresh = id
      if (fresh === "" || has(fresh)) {
        const base = `${id === "" ? "call" : id}_${step}_${index}`
        fresh = base
        for (let n = 1; has(fresh); n++) fresh = `${base}_${n}`
      }
      seen.add(fresh)
      return fresh
    },
    has
  }
}

/**
 * The ids of the calls in `messages`, in order.
 *
 * @category getters
 * @since 0.2.0
 */
export const idsOf = (messages: ReadonlyArray<Prompt.Message>): Array<string> => {
  const ids: Array<string> = []
  for (const message of messages) {
    if (message.role === "assistant" && message.toolCalls !== undefined) {
      for (const call of message.toolCalls) ids.push(call.id)
    }
  }
  return ids
}

/**
 * A conversation whose tool call ids are unique, and its {@link Ids} to
 * assign the ids of the calls that follow. Each assistant message's calls
 * are given their ids in order (the `n`-th assistant message is step `n`);
 * a call whose id is empty or was used before gets a fresh one, and the
 * tool messages after it that answer its old id — the first tool message
 * for the first such call, and so on — answer the fresh one. A tool message
 * that answers no call of the assistant message before it is left as it is
 * (a history check refuses it).
 *
 * With `keepLast`, the last assistant message's calls keep their ids and
 * earlier calls yield to them: what a paused turn needs, whose pending
 * calls are known by those ids. Messages that need no change are returned
 * as they are (the same objects); a conversation that needs none is
 * returned as the same array.
 *
 * @category constructors
 * @since 0.2.0
 */
export const unique = (
  messages: ReadonlyArray<Prompt.Message>,
  options?: { readonly keepLast?: boolean | undefined }
): { readonly messages: ReadonlyArray<Prompt.Message>; readonly ids: Ids } => {
  const last = options?.keepLast === true ? messages.findLastIndex((message) => message.role === "assistant") : -1
  const kept = last === -1 ? [] : idsOf([messages[last] as Prompt.Message])
  const ids = make(kept)
  let out: Array<Prompt.Message> | undefined
  // The current assistant message's calls not answered yet, by their id as the model sent it.
  let open = new Map<string, Array<string>>()
  let step = 0
  for (const [i, message] of messages.entries()) {
    let next = message
    if (message.role === "assistant") {
      step++
      open = new Map()
      if (message.toolCalls !== undefined && message.toolCalls.length > 0) {
        let changed = false
        const calls = message.toolCalls.map((call, index) => {
          const id = i === last ? call.id : ids.assign(call.id, step, index)
          const waiting = open.get(call.id)
          if (waiting === undefined) open.set(call.id, [id])
          else waiting.push(id)
          if (id === call.id) return call
          changed = true
          return { ...call, id }
        })
        if (changed) next = { ...message, toolCalls: calls }
      }
    } else if (message.role === "tool") {
      const id = open.get(message.toolCallId)?.shift()
      if (id !== undefined && id !== message.toolCallId) next = { ...message, toolCallId: id }
    }
    if (next !== message) out ??= messages.slice(0, i)
    out?.push(next)
  }
  return { messages: out ?? messages, ids }
}
