/**
 * No message in a request has text that is empty or only whitespace, for every role and every blank text,
 * through the real `openai` SDK against a local endpoint: assistant text beside tool calls goes as no text, an
 * empty answer kept in a thread is left out of the replay, and an empty tool result goes as a placeholder —
 * every call keeping exactly one tool message, and the caller's result unchanged.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, LanguageModel, type Prompt, Role, ThreadStore } from "@rolecraft/core"
import { ChatCompletionsServer as Server } from "@rolecraft/testing"
import { Effect, Schema } from "effect"
import * as fc from "fast-check"
import { openAiOn } from "../support/openai.ts"
import * as Seeded from "../support/seeded.ts"

interface WireMessage {
  readonly role: string
  readonly content?: unknown
  readonly tool_calls?: ReadonlyArray<{ readonly id: string }>
  readonly tool_call_id?: string
}

const messagesOf = (body: unknown): ReadonlyArray<WireMessage> =>
  (body as { readonly messages: ReadonlyArray<WireMessage> }).messages

/** What every request must obey: no blank text; `null` only beside tool calls; one tool message per call. */
const checkRequest = (messages: ReadonlyArray<WireMessage>) => {
  for (const message of messages) {
    if (message.content === null) {
      assert.isTrue(message.role === "assistant" && (message.tool_calls?.length ?? 0) > 0, JSON.stringify(message))
      continue
    }
    assert.isString(message.content, JSON.stringify(message))
    assert.notStrictEqual((message.content as string).trim(), "", JSON.stringify(message))
  }
  const calls = messages.flatMap((message) => message.tool_calls?.map((call) => call.id) ?? [])
  const answers = messages.flatMap((message) => (message.role === "tool" ? [message.tool_call_id] : []))
  assert.deepStrictEqual([...answers].sort(), [...calls].sort())
}

const blanks = ["", " ", "\n\n", "\t \n"]

const content = fc.oneof(fc.constantFrom(...blanks), fc.constantFrom("Hello.", " Lisbon ", "ok"))

/** A history: system, then exchanges of a user message and an answer that may call tools. */
const history = fc
  .tuple(
    content,
    fc.array(
      fc.record({
        user: content,
        answer: content,
        calls: fc.array(content, { maxLength: 2 })
      }),
      { minLength: 1, maxLength: 3 }
    )
  )
  .map(([system, exchanges]) => {
    const messages: Array<Prompt.Message> = [{ role: "system", content: system }]
    exchanges.forEach((exchange, i) => {
      messages.push({ role: "user", content: exchange.user })
      if (exchange.calls.length === 0) {
        messages.push({ role: "assistant", content: exchange.answer })
        return
      }
      const toolCalls = exchange.calls.map((_, j) => ({ id: `call_${i}_${j}`, name: "lookup", arguments: "{}" }))
      messages.push({ role: "assistant", content: exchange.answer, toolCalls })
      exchange.calls.forEach((result, j) => {
        messages.push({ role: "tool", toolCallId: `call_${i}_${j}`, content: result })
      })
    })
    messages.push({ role: "user", content: "And now?" })
    return messages
  })

describe("no blank text is sent to a provider", () => {
  it.live("every role x every blank text, through the openai SDK: nothing blank, one tool message per call", () =>
    Effect.gen(function* () {
      const runs = 60
      const server = yield* Server.make(Array.from({ length: runs }, () => Server.reply("ok")))
      const model = yield* Effect.provide(Effect.service(LanguageModel.LanguageModel), openAiOn(server))
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(history, async (messages) => {
            await Effect.runPromise(model.generate({ messages }))
          }),
          { numRuns: runs }
        )
      )
      const requests = yield* server.requests
      assert.strictEqual(requests.length, runs)
      for (const request of requests) {
        const wire = messagesOf(request.body)
        checkRequest(wire)
        // The last user message always goes.
        assert.strictEqual(wire.at(-1)?.content, "And now?")
      }
    }).pipe(Effect.scoped)
  )

  it.live(
    "a chat turn: blank text beside a call goes as none, an empty result as the placeholder, the caller's result unchanged",
    () =>
      Effect.gen(function* () {
        const role = Role.make({
          identity: { name: "desk", goal: "Answer", domain: "desk" },
          actions: {
            note: Action.local({ description: "Returns nothing", parameters: { id: Schema.String }, run: () => "" })
          }
        })
        const server = yield* Server.make([
          Server.toolCalls([{ id: "call_1", name: "note", arguments: { id: "a" } }], { text: "\n\n" }),
          Server.reply(""),
          Server.reply("Second answer.")
        ])
        const agent = yield* Agent.make({ id: "desk", roles: [role] })
        const thread = `blank-${Seeded.randomUUID()}`
        const first = yield* agent.chat("First?", { thread }).pipe(Effect.provide(openAiOn(server)))
        assert.strictEqual(first._tag, "Completed")
        yield* agent.chat("Second?", { thread }).pipe(Effect.provide(openAiOn(server)))
        const requests = yield* server.requests
        assert.strictEqual(requests.length, 3)
        for (const request of requests) checkRequest(messagesOf(request.body))
        const second = messagesOf(requests[1]?.body)
        assert.deepStrictEqual(second.at(-2) as unknown, {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "note", arguments: '{"id":"a"}' } }]
        })
        assert.deepStrictEqual(second.at(-1), {
          role: "tool",
          tool_call_id: "call_1",
          content: "(the tool returned no output)"
        })
        // The next turn: the empty answer is left out of the replay.
        const third = messagesOf(requests[2]?.body)
        assert.deepStrictEqual(
          third.slice(-2).map((message) => [message.role, message.content]),
          [
            ["tool", "(the tool returned no output)"],
            ["user", "Second?"]
          ]
        )
        // What the caller and the thread keep is unchanged: the empty answer, the blank text.
        const kept = yield* ThreadStore.ThreadStore.pipe(Effect.flatMap((store) => store.read(thread)))
        const assistant = kept.messages.filter((message) => message.role === "assistant")
        assert.deepStrictEqual(
          assistant.map((message) => message.content),
          ["\n\n", "", "Second answer."]
        )
      }).pipe(Effect.scoped, Effect.provide(ThreadStore.layerMemory))
  )
})
