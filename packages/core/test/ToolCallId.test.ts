/**
 * Tool call ids (C05, C54, C55): one assignment for every path. Empty, repeated and colliding ids — within a
 * response, across the turns of one history, in a history passed back in, in a resumed state — get fresh ids
 * unique in the whole conversation, used in the assistant and the tool message alike; a property drives
 * random conversations of such ids through real chat turns, pauses and resumes.
 */
import { assert, describe, it } from "@effect/vitest"
import { ScriptedModel } from "@rolecraft/testing"
import { Effect, Exit, Option } from "effect"
import * as fc from "fast-check"
import * as Agent from "../src/Agent.ts"
import * as Chat from "../src/Chat.ts"
import type * as Prompt from "../src/Prompt.ts"
import * as ToolCallId from "../src/ToolCallId.ts"
import { fixture } from "./support/TravelRole.ts"

const numRuns = Number(process.env.FAULTS_RUNS ?? 100)

/** Model call ids: empty, repeated, and colliding with the fresh ids the library makes. */
const pool = fc.constantFrom("", "call_1", "call_1_0", "call_2_0", "call_1_0_1", "dup")

const call = (id: string, name = "ping"): Prompt.ToolCall => ({ id, name, arguments: "{}" })
const assistant = (...calls: ReadonlyArray<Prompt.ToolCall>): Prompt.Message => ({
  role: "assistant",
  content: "",
  toolCalls: calls
})
const answer = (toolCallId: string, content: string): Prompt.Message => ({ role: "tool", toolCallId, content })

/**
 * Every tool message answers exactly one call of the assistant message before it, every call is answered
 * (but `open` ones of the last assistant message), and no two calls of the conversation share an id.
 */
const checkConversation = (messages: ReadonlyArray<Prompt.Message>, open: ReadonlySet<string> = new Set()) => {
  const ids = ToolCallId.idsOf(messages)
  assert.strictEqual(new Set(ids).size, ids.length, `repeated ids: ${ids.join(", ")}`)
  for (const id of ids) assert.notStrictEqual(id, "")
  let waiting = new Set<string>()
  for (const message of messages) {
    if (message.role === "assistant") {
      assert.strictEqual(waiting.size, 0, `unanswered: ${[...waiting].join(", ")}`)
      waiting = new Set((message.toolCalls ?? []).map((c) => c.id))
    } else if (message.role === "tool") {
      assert.isTrue(waiting.delete(message.toolCallId), `${message.toolCallId} answers no open call`)
    }
  }
  for (const id of open) waiting.delete(id)
  assert.strictEqual(waiting.size, 0, `unanswered: ${[...waiting].join(", ")}`)
}

describe("ToolCallId", () => {
  it("keeps a new non-empty id; an empty or used one gets <id or call>_<step>_<index>, then _<n>", () => {
    const ids = ToolCallId.make(["call_1", "call_1_2_0"])
    assert.strictEqual(ids.assign("call_9", 2, 0), "call_9")
    assert.strictEqual(ids.assign("call_1", 2, 0), "call_1_2_0_1")
    assert.strictEqual(ids.assign("", 2, 1), "call_2_1")
    assert.strictEqual(ids.assign("", 2, 1), "call_2_1_1")
    assert.strictEqual(ids.assign("call_9", 2, 3), "call_9_2_3")
    assert.strictEqual(ids.assign("get_weather", 3, 0), "get_weather", "a new id is kept, whatever it says")
    for (const id of ["call_9", "call_1_2_0_1", "call_2_1", "call_2_1_1", "call_9_2_3"]) assert.isTrue(ids.has(id))
  })

  it("ids repeated across the turns of a history get fresh ones, in the calls and in the tool messages (C05)", () => {
    const history: ReadonlyArray<Prompt.Message> = [
      { role: "system", content: "s" },
      { role: "user", content: "first" },
      assistant(call("call_1_0"), call("call_1_1")),
      answer("call_1_0", "a"),
      answer("call_1_1", "b"),
      { role: "user", content: "second" },
      assistant(call("call_1_0"), call("call_1_1")),
      answer("call_1_1", "d"),
      answer("call_1_0", "c")
    ]
    const { messages } = ToolCallId.unique(history)
    checkConversation(messages)
    assert.deepStrictEqual(ToolCallId.idsOf(messages), ["call_1_0", "call_1_1", "call_1_0_2_0", "call_1_1_2_1"])
    assert.deepStrictEqual(
      messages.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m.content]] : [])),
      [
        ["call_1_0", "a"],
        ["call_1_1", "b"],
        ["call_1_1_2_1", "d"],
        ["call_1_0_2_0", "c"]
      ]
    )
    assert.strictEqual(messages[0], history[0], "an unchanged message is the same object")
    assert.strictEqual(ToolCallId.unique(messages).messages, messages, "a unique history is returned as it is")
  })

  it("ids repeated or empty within one message are told apart by order: the n-th answer is the n-th call's", () => {
    const { messages } = ToolCallId.unique([
      { role: "user", content: "go" },
      assistant(call("dup"), call("dup"), call(""), call("")),
      answer("dup", "first dup"),
      answer("", "first empty"),
      answer("dup", "second dup"),
      answer("", "second empty")
    ])
    checkConversation(messages)
    const calls = messages[1]?.role === "assistant" ? (messages[1].toolCalls ?? []) : []
    const byId = new Map(messages.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m.content]] : [])))
    assert.deepStrictEqual(
      calls.map((c) => byId.get(c.id)),
      ["first dup", "second dup", "first empty", "second empty"]
    )
  })

  it("keepLast: the last assistant message keeps its ids (a paused turn's pending calls); earlier ones yield", () => {
    const { messages } = ToolCallId.unique(
      [
        { role: "user", content: "first" },
        assistant(call("call_1")),
        answer("call_1", "a"),
        { role: "user", content: "second" },
        assistant(call("call_1", "book"), call("call_2"))
      ],
      { keepLast: true }
    )
    assert.deepStrictEqual(ToolCallId.idsOf(messages), ["call_1_1_0", "call_1", "call_2"])
    checkConversation(messages, new Set(["call_1", "call_2"]))
  })

  // Histories of random turns whose ids come from a small pool (empty, repeated, colliding with fresh ids),
  // each call answered in a random order: after `unique`, the conversation is well formed and each answer
  // still belongs to the call it answered.
  const turn = fc
    .array(pool, { minLength: 0, maxLength: 4 })
    .chain((ids) => fc.tuple(fc.constant(ids), fc.shuffledSubarray([...ids.keys()], { minLength: ids.length })))

  it("property: any history of empty, repeated and colliding ids becomes well formed, answers kept to their calls", () => {
    fc.assert(
      fc.property(fc.array(turn, { minLength: 1, maxLength: 5 }), (turns) => {
        const history: Array<Prompt.Message> = []
        for (const [t, [ids, order]] of turns.entries()) {
          history.push({ role: "user", content: `turn ${t}` })
          history.push(
            ids.length === 0 ? { role: "assistant", content: "text" } : assistant(...ids.map((id) => call(id)))
          )
          // An answer's content says which call it answers; answers of one id keep the order of its calls.
          const answers = order.map((i) => ({ i, id: ids[i] as string }))
          const byId = new Map<string, Array<number>>()
          for (const [i, id] of ids.entries()) byId.set(id, [...(byId.get(id) ?? []), i])
          for (const { id } of answers) {
            const i = byId.get(id)?.shift() as number
            history.push(answer(id, `${t}:${i}`))
          }
        }
        const { messages, ids } = ToolCallId.unique(history)
        checkConversation(messages)
        let t = -1
        let calls: ReadonlyArray<Prompt.ToolCall> = []
        for (const message of messages) {
          if (message.role === "user") t++
          if (message.role === "assistant") calls = message.toolCalls ?? []
          if (message.role === "tool") {
            const [turnOf, index] = message.content.split(":").map(Number)
            assert.strictEqual(turnOf, t)
            assert.strictEqual(calls[index as number]?.id, message.toolCallId)
          }
        }
        for (const id of ToolCallId.idsOf(messages)) assert.isTrue(ids.has(id))
      }),
      { numRuns: numRuns * 10 }
    )
  })
})

describe("ToolCallId through chat turns", () => {
  it.effect(
    "ids repeat across the turns of one history no more: a history passed back answers each id once (C05)",
    () =>
      Effect.gen(function* () {
        const { travel } = fixture()
        const agent = yield* Agent.make({ id: "planner", roles: [travel] })
        const script = () => [
          ScriptedModel.toolCalls([
            { id: "", name: "ping" },
            { id: "", name: "ping" }
          ]),
          ScriptedModel.reply("ok")
        ]
        const first = yield* agent.chat("Ping twice").pipe(Effect.provide(ScriptedModel.layer(script())))
        assert.strictEqual(first._tag, "Completed")
        const history = first._tag === "Completed" ? first.messages : []
        const second = yield* agent
          .chat([...history, { role: "user", content: "Again" }])
          .pipe(Effect.provide(ScriptedModel.layer(script())))
        const messages = second._tag === "Completed" ? second.messages : []
        checkConversation(messages)
        assert.deepStrictEqual(ToolCallId.idsOf(messages), ["call_1_0", "call_1_1", "call_1_0_1", "call_1_1_1"])
      })
  )

  // Random conversations through real turns: each turn's model calls `ping` or `book` (which needs an
  // approval) under ids from the pool; a paused turn is resumed with random decisions, then resumed again
  // with the opposite ones, which must be refused as already decided with nothing run.
  const scenario = fc.array(
    fc.array(fc.record({ id: pool, book: fc.boolean(), approve: fc.boolean() }), { minLength: 1, maxLength: 4 }),
    { minLength: 1, maxLength: 4 }
  )

  it("property: random turns of empty and repeated ids: well formed, every call answered once, decided once", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, (turns) =>
        Effect.runPromise(
          Effect.gen(function* () {
            const { travel, counts } = fixture()
            const agent = yield* Agent.make({ id: "planner", roles: [travel] })
            let history: ReadonlyArray<Prompt.Message> = []
            let approved = 0
            let pings = 0
            const decidedTokens: Array<readonly [string, boolean]> = []
            for (const [t, calls] of turns.entries()) {
              const scripted = yield* ScriptedModel.make([
                ScriptedModel.toolCalls(
                  calls.map((c, i) =>
                    c.book
                      ? { id: c.id, name: "book", arguments: { hotel: `h-${t}-${i}` } }
                      : { id: c.id, name: "ping" }
                  )
                ),
                ScriptedModel.reply(`turn ${t} done`)
              ])
              const layer = scripted.layer
              pings += calls.filter((c) => !c.book).length
              const input = [...history, { role: "user" as const, content: `turn ${t}` }]
              let result = yield* agent.chat(t === 0 ? `turn ${t}` : input).pipe(Effect.provide(layer))
              if (result._tag === "AwaitingApproval") {
                const paused = result
                checkConversation(paused.state.messages, new Set(paused.pending.map((p) => p.toolCallId)))
                const verdicts = paused.pending.map((p) => {
                  const index = Number((p.arguments.hotel as string).split("-")[2])
                  return calls[index]?.approve === true
                })
                const decisions = (approve: (i: number) => boolean) =>
                  Object.fromEntries(
                    paused.pending.map((p, i) => [
                      p.toolCallId,
                      approve(i) ? Chat.approve("ann") : Chat.reject("ann", "no")
                    ])
                  )
                result = yield* agent
                  .resume(
                    paused.state,
                    decisions((i) => verdicts[i] === true)
                  )
                  .pipe(Effect.provide(layer))
                approved += verdicts.filter(Boolean).length
                for (const [i, p] of paused.pending.entries())
                  decidedTokens.push([p.pendingTokenId, verdicts[i] === true])
                const booked = counts.book
                const again = yield* Effect.exit(
                  agent
                    .resume(
                      paused.state,
                      decisions((i) => verdicts[i] !== true)
                    )
                    .pipe(Effect.provide(layer))
                )
                assert.isTrue(Exit.isFailure(again))
                const error = Exit.isFailure(again) ? Option.getOrUndefined(Exit.findErrorOption(again)) : undefined
                assert.strictEqual(error?._tag === "ApprovalRequired" && error.check, "decided")
                assert.strictEqual(counts.book, booked, "a refused second decision runs nothing")
              }
              assert.strictEqual(result._tag, "Completed")
              history = result._tag === "Completed" ? result.messages : []
              checkConversation(history)
            }
            assert.strictEqual(counts.book, approved)
            assert.strictEqual(counts.ping, pings)
            for (const [tokenId, approve] of decidedTokens) {
              const token = Option.getOrThrow(yield* agent.approvals.get(tokenId))
              assert.deepStrictEqual([token.status, token.approver], [approve ? "used" : "rejected", "ann"])
            }
          }).pipe(Effect.scoped)
        )
      ),
      { numRuns }
    )
  })
})
