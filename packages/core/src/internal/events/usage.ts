/**
 * Token metering of one call, written once: the call runs with a fresh
 * `LanguageModel.UsageMeter` (nested in any meter already there, which also
 * receives what it records), and its usage is read from that meter.
 */
import * as Effect from "effect/Effect"
import type { Usage } from "../../ActionResponse.ts"
import * as LanguageModel from "../../LanguageModel.ts"

/**
 * Runs `use` with `self` metered and an effect reading the usage of the
 * model calls made so far (`undefined` when there were none). Callers meter
 * only llm actions, so other calls pay nothing for it.
 */
export const metered = <A, E, R, B, E2, R2>(
  self: Effect.Effect<A, E, R>,
  use: (run: Effect.Effect<A, E, R>, usage: Effect.Effect<Usage | undefined>) => Effect.Effect<B, E2, R2>
): Effect.Effect<B, E2, R2> =>
  Effect.flatMap(LanguageModel.makeUsageMeter, (meter) =>
    use(
      Effect.provideService(self, LanguageModel.UsageMeter, meter),
      Effect.map(meter.total, (total) => (total.calls === 0 ? undefined : total.usage))
    )
  )
