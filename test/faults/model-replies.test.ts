/**
 * Replies of unexpected shape from an OpenAI-compatible server (C33 and the
 * model-reply audit): the real `openai` SDK, through the openai layer,
 * against a local endpoint sending raw bodies. Every field the chat loop or
 * the llm executor reads may be absent, null, empty, of another type,
 * duplicated or contradict another field; each case has a decided behaviour
 * and none ends a turn with a defect.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Chat, type LanguageModel, Role } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer as Server } from "@rolecraft/testing"
import { Effect, Exit, Redacted, Schema } from "effect"

const completion = (message: unknown, extra?: Record<string, unknown>) =>
  Server.raw(
    JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "gpt-test",
      choices: [{ index: 0, message, finish_reason: "tool_calls", logprobs: null }],
      ...extra
    })
  )

const call = (fields: Record<string, unknown>) => ({ role: "assistant", content: null, tool_calls: [fields] })
const fn = (name: unknown, args: unknown = "{}") => ({ name, arguments: args })

interface WireMessage {
  readonly role: string
  readonly content: string | null
  readonly tool_call_id?: string
  readonly tool_calls?: ReadonlyArray<{ readonly id: string }>
}

const role = (ran: Array<string>) =>
  Role.make({
    identity: { name: "desk", goal: "Look things up", domain: "desk" },
    actions: {
      lookup: Action.local({
        description: "Look a word up",
        parameters: { word: Schema.optional(Schema.String) },
        run: ({ word }) => {
          ran.push(word ?? "")
          return `found ${word ?? "nothing"}`
        }
      }),
      summarize: Action.llm({ description: "Summarise the text", parameters: { text: Schema.String } })
    }
  })

/** One chat turn (or `f`) through the openai layer against a server answering `script`. */
const against = <A, E>(
  script: ReadonlyArray<Server.Step>,
  f: (agent: Agent.Agent<any, never>) => Effect.Effect<A, E, LanguageModel.LanguageModel>
) =>
  Effect.gen(function* () {
    const ran: Array<string> = []
    const server = yield* Server.make(script)
    const agent = yield* Agent.make({ id: "replies", roles: [role(ran)] })
    const layer = OpenAiLanguageModel.layer({
      model: "gpt-test",
      apiKey: Redacted.make("sk-test"),
      baseURL: server.baseURL,
      timeout: "10 seconds"
    })
    const exit = yield* Effect.exit(Effect.provide(f(agent as unknown as Agent.Agent<any, never>), layer))
    const requests = (yield* server.requests).map((request) => request.body as { messages: Array<WireMessage> })
    return { exit, ran, requests }
  }).pipe(Effect.scoped)

const chat = (script: ReadonlyArray<Server.Step>) => against(script, (agent) => agent.chat("go"))

/** Every tool call id of every assistant message has exactly one tool message, in the request after it. */
const pairedIds = (messages: ReadonlyArray<WireMessage>) => {
  const asked = messages.flatMap((message) => (message.tool_calls ?? []).map((c) => c.id))
  const answered = messages.flatMap((message) => (message.role === "tool" ? [message.tool_call_id ?? ""] : []))
  assert.deepStrictEqual([...answered].sort(), [...asked].sort())
  assert.strictEqual(new Set(asked).size, asked.length, `tool call ids are unique: ${asked.join(", ")}`)
}

const toolMessages = (messages: ReadonlyArray<WireMessage>) =>
  messages.filter((message) => message.role === "tool").map((message) => message.content ?? "")

const completed = (exit: Exit.Exit<Chat.ChatResult, unknown>) => {
  assert.isTrue(Exit.isSuccess(exit), String(exit))
  const result = Exit.isSuccess(exit) ? exit.value : undefined
  assert.strictEqual(result?._tag, "Completed")
  return result as Chat.Completed
}

const failed = (exit: Exit.Exit<unknown, unknown>) => {
  assert.isTrue(Exit.isFailure(exit))
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(reason?._tag, "Fail", `a typed failure, not a defect: ${String(exit)}`)
  return (reason as { readonly error: { readonly category: string; readonly message: string } }).error
}

describe("chat turns against replies of unexpected shape", () => {
  it.live("C33: a tool call without `type` is read as a function call; it runs and is answered under its id", () =>
    Effect.gen(function* () {
      const { exit, ran, requests } = yield* chat([
        completion(call({ id: "c1", function: fn("lookup", '{"word":"tide"}') })),
        Server.reply("done")
      ])
      assert.strictEqual(completed(exit).text, "done")
      assert.deepStrictEqual(ran, ["tide"])
      pairedIds(requests[1]!.messages)
      assert.deepStrictEqual(toolMessages(requests[1]!.messages), ["found tide"])
    })
  )

  it.live(
    "C33: a call without a name, with a number for a name, or with an empty name gets a NOT_FOUND tool message and the turn goes on",
    () =>
      Effect.gen(function* () {
        for (const name of [undefined, 42, "", null]) {
          const { exit, ran, requests } = yield* chat([
            completion(call({ id: "c1", type: "function", function: fn(name) })),
            Server.reply("done")
          ])
          assert.strictEqual(completed(exit).text, "done", String(name))
          assert.deepStrictEqual(ran, [])
          pairedIds(requests[1]!.messages)
          const answer = JSON.parse(toolMessages(requests[1]!.messages)[0] ?? "{}")
          assert.strictEqual(answer.error?.category, "NOT_FOUND", String(name))
        }
      })
  )

  it.live("C33: message content that is a number or an object fails the turn EXECUTION naming the field", () =>
    Effect.gen(function* () {
      for (const content of [123, { text: "x" }, true]) {
        const { exit } = yield* chat([completion({ role: "assistant", content }, {})])
        const error = failed(exit)
        assert.strictEqual(error.category, "EXECUTION", JSON.stringify(content))
        assert.include(error.message, "malformed")
        assert.include(error.message, "content")
      }
    })
  )

  it.live("duplicated tool call ids each get exactly one answer under an id of their own", () =>
    Effect.gen(function* () {
      const { exit, ran, requests } = yield* chat([
        completion({
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "dup", type: "function", function: fn("lookup", '{"word":"a"}') },
            { id: "dup", type: "function", function: fn("lookup", '{"word":"b"}') }
          ]
        }),
        Server.reply("done")
      ])
      completed(exit)
      assert.deepStrictEqual([...ran].sort(), ["a", "b"])
      pairedIds(requests[1]!.messages)
    })
  )

  it.live("a tool call without an id (or with an empty or numeric one) is answered under an id of its own", () =>
    Effect.gen(function* () {
      for (const id of [undefined, "", 7, null]) {
        const { exit, ran, requests } = yield* chat([
          completion(call({ ...(id === undefined ? {} : { id }), type: "function", function: fn("lookup") })),
          Server.reply("done")
        ])
        completed(exit)
        assert.deepStrictEqual(ran, [""], String(id))
        pairedIds(requests[1]!.messages)
      }
    })
  )

  it.live("tool_calls that is not a list, or holds a non-object, fails the turn EXECUTION naming tool_calls", () =>
    Effect.gen(function* () {
      for (const toolCalls of [{ id: "c1" }, "lookup", [null], [42]]) {
        const { exit } = yield* chat([completion({ role: "assistant", content: null, tool_calls: toolCalls })])
        const error = failed(exit)
        assert.strictEqual(error.category, "EXECUTION", JSON.stringify(toolCalls))
        assert.include(error.message, "tool_calls")
      }
    })
  )

  it.live(
    "contradicting and odd fields: finish_reason 'stop' with tool calls runs them; null tool_calls and odd usage, refusal and model are ignored",
    () =>
      Effect.gen(function* () {
        const { exit, ran } = yield* chat([
          Server.raw(
            JSON.stringify({
              id: "x",
              choices: [
                {
                  index: 0,
                  finish_reason: "stop",
                  message: {
                    role: "assistant",
                    content: "",
                    tool_calls: [{ id: "c1", type: "function", function: fn("lookup", { word: "obj" }) }]
                  }
                }
              ],
              usage: { prompt_tokens: "many", completion_tokens: -1, total_tokens: null },
              model: 42
            })
          ),
          completion({ role: "assistant", content: "done", tool_calls: null, refusal: 5 }, { usage: "none" })
        ])
        const result = completed(exit)
        assert.strictEqual(result.text, "done")
        assert.deepStrictEqual(ran, ["obj"])
        assert.deepStrictEqual(result.usage, { inputTokens: 0, outputTokens: 0, totalTokens: 0 })
      })
  )
})

describe("llm actions against replies of unexpected shape", () => {
  it.live("C33: content that is a number is EXECUTION naming the field, not a defect", () =>
    Effect.gen(function* () {
      const { exit } = yield* against([completion({ role: "assistant", content: 123 })], (agent) =>
        agent.executeAction("summarize", { text: "a long text" })
      )
      const error = failed(exit)
      assert.strictEqual(error.category, "EXECUTION")
      assert.include(error.message, "content")
    })
  )

  it.live("null content (finish reason 'tool_calls' but no calls) is EXECUTION 'no text' with the finish reason", () =>
    Effect.gen(function* () {
      const { exit } = yield* against([completion({ role: "assistant", content: null })], (agent) =>
        agent.executeAction("summarize", { text: "a long text" })
      )
      const error = failed(exit)
      assert.strictEqual(error.category, "EXECUTION")
      assert.include(error.message, "no text")
      assert.include(error.message, "tool_calls")
    })
  )
})
