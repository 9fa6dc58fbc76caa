/**
 * What a model layer declares about the provider API it speaks, for what a
 * chat turn sends it: the most tools one request may carry (`toolLimit`),
 * and how the API spells "no parallel tool calls" (`parallelCalls`):
 *
 * - `"parallel_tool_calls"`: a request field `parallel_tool_calls: false`
 *   (OpenAI's Chat Completions and Responses);
 * - `"disable_parallel_tool_use"`: `tool_choice.disable_parallel_tool_use:
 *   true` (Anthropic's Messages);
 * - `"none"`: the API cannot be told; a turn that asks for no parallel calls
 *   still runs its calls one at a time, in the model's order.
 *
 * A layer declares its profile with `LanguageModel.make({ profile })`, and
 * the service carries it (`LanguageModel.profile`); a service without one is
 * read as {@link unknown}.
 *
 * @example
 * ```ts
 * import { LanguageModel, ProviderProfile } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * // A layer over an API that takes at most 64 tools and cannot be told "no parallel calls".
 * const model = LanguageModel.make(() => Effect.die("not called in this example"), {
 *   name: "local",
 *   profile: ProviderProfile.make({ toolLimit: 64, parallelCalls: "none" })
 * })
 * ```
 *
 * @since 0.3.0
 */

/**
 * A provider's profile (see the module doc). `toolLimit`: an integer >= 1,
 * absent when the API states none.
 *
 * @category models
 * @since 0.3.0
 */
export interface ProviderProfile {
  readonly toolLimit?: number | undefined
  readonly parallelCalls: "parallel_tool_calls" | "disable_parallel_tool_use" | "none"
}

/**
 * The profile of a provider nothing is known of: no tool limit, no way to
 * ask for calls one at a time.
 *
 * @category constants
 * @since 0.3.0
 */
export const unknown: ProviderProfile = { parallelCalls: "none" }

/**
 * Makes a profile.
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = (profile: ProviderProfile): ProviderProfile => ({ ...profile })
