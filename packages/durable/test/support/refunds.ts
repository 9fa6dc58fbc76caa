// A small agent for the durable tests, the multi-process harness and the bench: one role whose `refund` action needs
// approval, and a model that calls `refund` for the user's message, then answers with the tool's reply.
import { Action, Agent, IdempotencyKey, type LanguageModel, Role } from "@rolecraft/core"
import * as Model from "@rolecraft/core/LanguageModel"
import { type Duration, Effect, Layer, Schema } from "effect"

/**
 * `onRefund` gets the order and the tool call's idempotency key (set by durable runs). `approval: false` (the
 * bench's turn without approval) leaves the approval out.
 */
export const refundsRole = (options: {
  readonly onRefund: (order: string, idempotencyKey: string | undefined) => Effect.Effect<void>
  readonly ttl?: Duration.Input | undefined
  readonly approval?: boolean | undefined
}) => {
  const refund = Action.local({
    description: "Refund an order",
    parameters: { order: Schema.String },
    run: ({ order }) =>
      Effect.gen(function* () {
        yield* options.onRefund(order, yield* IdempotencyKey.IdempotencyKey)
        return `refunded ${order}`
      })
  })
  return Role.make({
    identity: { name: "refunds", goal: "Refund orders", domain: "support" },
    actions: {
      refund:
        options.approval === false
          ? refund
          : refund.pipe(
              Action.requireApproval({
                reason: "Refunds move money",
                ...(options.ttl === undefined ? {} : { ttl: options.ttl })
              })
            )
    }
  })
}

/**
 * The model of the durable tests, the multi-process harness, the bench and the C84 runs: a user message → a call
 * `call_1` of `tool` (default `refund`; the harness picks one by the message) with `{ order: message }`; a tool
 * answer → a text reply quoting it. `onCall` runs first, on every call (to count or record it, or to wait).
 */
export const refundModel = (
  onCall: (request: LanguageModel.Request) => Effect.Effect<void>,
  options?: { readonly tool?: ((message: string) => string) | undefined; readonly name?: string | undefined }
) =>
  Layer.succeed(
    Model.LanguageModel,
    Model.make(
      (call) =>
        Effect.as(onCall(call.request), undefined).pipe(
          Effect.map(() => {
            const last = call.request.messages.at(-1)
            return last?.role === "user"
              ? {
                  toolCalls: [
                    {
                      id: "call_1",
                      name: options?.tool?.(last.content) ?? "refund",
                      arguments: JSON.stringify({ order: last.content })
                    }
                  ],
                  finishReason: "tool_calls",
                  usage: { inputTokens: 10, outputTokens: 5 }
                }
              : {
                  text: `Done: ${last?.content ?? ""}`,
                  finishReason: "stop",
                  usage: { inputTokens: 20, outputTokens: 3 }
                }
          })
        ),
      { name: options?.name ?? "scripted-refunds" }
    )
  )

export const makeAgent = (options: {
  readonly onRefund: (order: string, idempotencyKey: string | undefined) => Effect.Effect<void>
  readonly ttl?: Duration.Input | undefined
  readonly approval?: boolean | undefined
}) => Agent.make({ id: "support", roles: [refundsRole(options)] })
