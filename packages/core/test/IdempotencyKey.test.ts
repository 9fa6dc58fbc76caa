// A call's idempotency key (IdempotencyKey.IdempotencyKey, set by a durable run) reaches the action in the form its kind
// understands, and consuming an approval is idempotent for the same key (C63): the same call run again after a
// crash proceeds instead of being refused as "used".
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Action, Agent, Chat, IdempotencyKey, Role } from "../src/index.ts"
import * as Model from "../src/LanguageModel.ts"
import * as LocalServer from "./support/LocalServer.ts"

const keyed = <A, E, R>(effect: Effect.Effect<A, E, R>, key: string) =>
  Effect.provideService(effect, IdempotencyKey.IdempotencyKey, key)

describe("the idempotency key reaches the action", () => {
  it.effect("a local action reads it on its context (undefined when the call has none)", () =>
    Effect.gen(function* () {
      const seen: Array<string | undefined> = []
      const role = Role.make({
        identity: { name: "r", goal: "g", domain: "d" },
        actions: {
          sync: Action.local({
            description: "a value",
            parameters: {},
            run: (_, context) => {
              seen.push(context.idempotencyKey)
              return "ok"
            }
          }),
          promised: Action.local({
            description: "a promise",
            parameters: {},
            run: async (_, context) => {
              await Promise.resolve()
              seen.push(context.idempotencyKey)
              return "ok"
            }
          })
        }
      })
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      yield* keyed(agent.executeAction("sync", {}), "run-1/call_1")
      yield* keyed(agent.executeAction("promised", {}), "run-1/call_2")
      yield* agent.executeAction("sync", {})
      assert.deepStrictEqual(seen, ["run-1/call_1", "run-1/call_2", undefined])
    }).pipe(Effect.scoped)
  )

  it.live("a webService action with idempotencyHeader sends it under that header; without a key, no header", () =>
    Effect.gen(function* () {
      const server = yield* LocalServer.start((_, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end('{"ok":true}')
      })
      const role = Role.make({
        identity: { name: "r", goal: "g", domain: "d" },
        actions: {
          charge: Action.webService({
            description: "Charge",
            parameters: { amount: Schema.Number },
            endpoint: `${server.url}/charges`,
            method: "POST",
            idempotencyHeader: "Idempotency-Key"
          }),
          plain: Action.webService({
            description: "Charge without the header",
            parameters: { amount: Schema.Number },
            endpoint: `${server.url}/plain`,
            method: "POST"
          })
        }
      })
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      yield* keyed(agent.executeAction("charge", { amount: 5 }), "run-1/call_1")
      yield* keyed(agent.executeAction("charge", { amount: 5 }), "run-1/cäll\u0000")
      yield* agent.executeAction("charge", { amount: 5 })
      yield* keyed(agent.executeAction("plain", { amount: 5 }), "run-1/call_1")
      assert.deepStrictEqual(
        server.received.map((r) => [r.path, r.headers["idempotency-key"]]),
        [
          ["/charges", "run-1/call_1"],
          ["/charges", encodeURIComponent("run-1/cäll\u0000")],
          ["/charges", undefined],
          ["/plain", undefined]
        ]
      )
      const bad = Role.make({
        identity: { name: "r", goal: "g", domain: "d" },
        actions: {
          charge: Action.webService({
            description: "Charge",
            parameters: {},
            endpoint: `${server.url}/charges`,
            idempotencyHeader: "Idempotency Key"
          })
        }
      })
      const refused = yield* Effect.flip((yield* Agent.make({ id: "b", roles: [bad] })).executeAction("charge", {}))
      assert.strictEqual(refused._tag, "ValidationError")
      assert.include(refused.message, "idempotencyHeader")
    }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
  )
})

describe("an approved call run again with its key proceeds (C63)", () => {
  // The model asks for one refund; the turn pauses; the approval is decided and the call runs under a key. The same
  // resume again — what a durable run does when its runner died after the call started — runs the call again with
  // the same key: the store finds its token used by that key, and the call proceeds instead of APPROVAL "used".
  const setup = Effect.gen(function* () {
    const runs: Array<string | undefined> = []
    const role = Role.make({
      identity: { name: "refunds", goal: "Refund orders", domain: "support" },
      actions: {
        refund: Action.local({
          description: "Refund an order",
          parameters: { order: Schema.String },
          run: ({ order }, context) => {
            runs.push(context.idempotencyKey)
            return `refunded ${order}`
          }
        }).pipe(Action.requireApproval({ reason: "Refunds move money" }))
      }
    })
    const agent = yield* Agent.make({ id: "support", roles: [role] })
    const model = Layer.succeed(
      Model.LanguageModel,
      Model.make(
        (call) =>
          Effect.succeed(
            call.request.messages.at(-1)?.role === "user"
              ? {
                  toolCalls: [{ id: "call_1", name: "refund", arguments: '{"order":"o-1"}' }],
                  finishReason: "tool_calls" as const,
                  usage: { inputTokens: 1, outputTokens: 1 }
                }
              : { text: "done", finishReason: "stop" as const, usage: { inputTokens: 1, outputTokens: 1 } }
          ),
        { name: "scripted" }
      )
    )
    return { runs, agent, model }
  })
  const withKey = (key: string | undefined): Chat.ChatOptions => ({
    steps: { tool: (step, call) => (key === undefined ? call : keyed(call, `${key}/${step.toolCallId}`)) }
  })
  const toolAnswer = (result: Chat.ChatResult) =>
    result._tag === "Completed" ? result.messages.find((m) => m.role === "tool")?.content : result._tag

  it.effect("the same resume again under the same key: the call runs again and is answered as done", () =>
    Effect.gen(function* () {
      const { runs, agent, model } = yield* setup
      const paused = yield* agent.chat("refund o-1", withKey("run-1")).pipe(Effect.provide(model))
      if (paused._tag !== "AwaitingApproval") return assert.fail(paused._tag)
      const decisions = { call_1: Chat.approve("alice") }
      const first = yield* agent.resume(paused.state, decisions, withKey("run-1")).pipe(Effect.provide(model))
      const again = yield* agent.resume(paused.state, decisions, withKey("run-1")).pipe(Effect.provide(model))
      assert.strictEqual(toolAnswer(first), "refunded o-1")
      assert.strictEqual(toolAnswer(again), "refunded o-1")
      assert.deepStrictEqual(runs, ["run-1/call_1", "run-1/call_1"])
    }).pipe(Effect.scoped)
  )

  it.effect("another key, or none, is another call: APPROVAL used, nothing runs", () =>
    Effect.gen(function* () {
      for (const other of ["run-2", undefined]) {
        const { runs, agent, model } = yield* setup
        const paused = yield* agent.chat("refund o-1", withKey("run-1")).pipe(Effect.provide(model))
        if (paused._tag !== "AwaitingApproval") return assert.fail(paused._tag)
        const decisions = { call_1: Chat.approve("alice") }
        yield* agent.resume(paused.state, decisions, withKey("run-1")).pipe(Effect.provide(model))
        const again = yield* agent.resume(paused.state, decisions, withKey(other)).pipe(Effect.provide(model))
        assert.include(toolAnswer(again), "the approval token has already been used", String(other))
        assert.deepStrictEqual(runs, ["run-1/call_1"])
      }
    }).pipe(Effect.scoped)
  )
})
