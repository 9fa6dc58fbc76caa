/**
 * The metrics of `Metrics`, as constructors of their series: a series made
 * with its attributes is one metric of its own. (`Metric.withAttributes`
 * instead wraps the shared metric and, on every update, adds the attributes
 * to the context and re-keys the shared metric, whose one-slot key cache
 * misses whenever series alternate: tens of µs per turn.) A series and the
 * shared metric with the same attributes are the same entry of the registry.
 */
import * as Metric from "effect/Metric"

type Attributes = Readonly<Record<string, string>>

export const actionCalls = (attributes?: Attributes): Metric.Counter<number> =>
  Metric.counter("rolecraft.action.calls", {
    description: "Calls an agent ran through its pipeline",
    incremental: true,
    ...(attributes === undefined ? {} : { attributes })
  })

export const actionFailures = (attributes?: Attributes): Metric.Counter<number> =>
  Metric.counter("rolecraft.action.failures", {
    description: "Calls that failed, by category",
    incremental: true,
    ...(attributes === undefined ? {} : { attributes })
  })

const actionDurationBoundaries = Metric.exponentialBoundaries({ start: 1, factor: 2, count: 18 })

export const actionDuration = (attributes?: Attributes): Metric.Histogram<number> =>
  Metric.histogram("rolecraft.action.duration", {
    description: "Duration of a call through the pipeline, in milliseconds",
    boundaries: actionDurationBoundaries,
    ...(attributes === undefined ? {} : { attributes })
  })

const tokenBoundaries = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]

export const tokenUsage = (attributes?: Attributes): Metric.Histogram<number> =>
  Metric.histogram("gen_ai.client.token.usage", {
    description: "Number of input and output tokens used by a model call",
    boundaries: tokenBoundaries,
    ...(attributes === undefined ? {} : { attributes })
  })

export const tokenUsageParts = (attributes?: Attributes): Metric.Histogram<number> =>
  Metric.histogram("rolecraft.client.token.usage.parts", {
    description:
      "Tokens of a model call's input read from or written to the prompt cache, and of its output spent on reasoning (parts of gen_ai.client.token.usage, never on top of it)",
    boundaries: tokenBoundaries,
    ...(attributes === undefined ? {} : { attributes })
  })

const secondsBoundaries = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]

export const operationDuration = (attributes?: Attributes): Metric.Histogram<number> =>
  Metric.histogram("gen_ai.client.operation.duration", {
    description: "Duration of a model call, in seconds",
    boundaries: secondsBoundaries,
    ...(attributes === undefined ? {} : { attributes })
  })
