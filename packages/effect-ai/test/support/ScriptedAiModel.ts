/**
 * A scripted effect/ai model, built with effect/ai's own `LanguageModel.make`:
 * each `generateText` call takes the next scripted reply (response parts, or an
 * `AiError` to fail with) and records the provider options it was asked with.
 */
import { Effect, Layer, Stream } from "effect"
import { AiError, LanguageModel, type Response } from "effect/ai"

export type Reply = ReadonlyArray<Response.PartEncoded> | AiError.AiError

export interface Scripted {
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  readonly requests: ReadonlyArray<LanguageModel.ProviderOptions>
  readonly remaining: () => number
}

export const scripted = (script: ReadonlyArray<Reply>): Scripted => {
  const requests: Array<LanguageModel.ProviderOptions> = []
  const queue = [...script]
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.suspend(() => {
          requests.push(options)
          const next = queue.shift()
          if (next === undefined) return Effect.die(new Error("the model was asked more often than scripted"))
          return AiError.isAiError(next) ? Effect.fail(next) : Effect.succeed([...next])
        }),
      streamText: () => Stream.die(new Error("streaming is not scripted"))
    })
  )
  return { layer, requests, remaining: () => queue.length }
}

export const finish = (
  reason: Response.FinishReason,
  inputTokens: number,
  outputTokens: number
): Response.PartEncoded => ({
  type: "finish",
  reason,
  usage: { inputTokens: { total: inputTokens }, outputTokens: { total: outputTokens } }
})

export const toolCall = (id: string, name: string, params: unknown): Response.PartEncoded => ({
  type: "tool-call",
  id,
  name,
  params
})

export const text = (value: string): Response.PartEncoded => ({ type: "text", text: value })
