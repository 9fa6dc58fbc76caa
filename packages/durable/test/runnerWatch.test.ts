// The runner watch of layerCluster: every runner records the other runners' health itself, so a crashed runner's
// shards move within seconds even when it held Effect's health-check singleton (issue 16: takeover time).
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Runner } from "effect/cluster/Runner"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as RunnerWatch from "../src/internal/runnerWatch.ts"

const self = RunnerAddress.make("127.0.0.1", 1001)
const dead = RunnerAddress.make("127.0.0.1", 1002)
const back = RunnerAddress.make("127.0.0.1", 1003)
const runner = (address: RunnerAddress.RunnerAddress) => new Runner({ address, groups: ["default"], weight: 1 })

/** In-memory runner storage with the three runners; `dead` does not answer pings, the others do. */
const setup = (selfHealthy: boolean) =>
  Effect.gen(function* () {
    const storage = yield* RunnerStorage.RunnerStorage
    yield* storage.register(runner(self), selfHealthy)
    yield* storage.register(runner(dead), true)
    yield* storage.register(runner(back), false)
    yield* RunnerWatch.checkOnce(new Map())
    const rows = yield* storage.getRunners
    return new Map(rows.map(([r, healthy]) => [r.address.port, healthy]))
  }).pipe(
    Effect.provide(
      Layer.mergeAll(
        RunnerStorage.layerMemory,
        Layer.succeed(RunnerHealth.RunnerHealth, {
          isAlive: (address) => Effect.succeed(address.port !== dead.port)
        }),
        ShardingConfig.layer({ runnerAddress: Option.some(self) })
      )
    )
  )

describe("runner watch", () => {
  it.effect("records a runner that does not answer as unhealthy, and one that answers again as healthy", () =>
    Effect.gen(function* () {
      const health = yield* setup(true)
      assert.strictEqual(health.get(dead.port), false)
      assert.strictEqual(health.get(back.port), true)
      assert.strictEqual(health.get(self.port), true)
    })
  )

  it.effect("records nothing while the runner is itself unhealthy", () =>
    Effect.gen(function* () {
      const health = yield* setup(false)
      assert.strictEqual(health.get(dead.port), true)
      assert.strictEqual(health.get(back.port), false)
      assert.strictEqual(health.get(self.port), false)
    })
  )

  it.effect("a runner that sorts after the silent one waits a second round before it records it", () =>
    Effect.gen(function* () {
      const storage = yield* RunnerStorage.RunnerStorage
      const early = RunnerAddress.make("127.0.0.1", 1000)
      yield* storage.register(runner(self), true)
      yield* storage.register(runner(early), true)
      const misses = new Map<string, number>()
      const healthOf = (address: RunnerAddress.RunnerAddress) =>
        Effect.map(storage.getRunners, (rows) => rows.find(([r]) => r.address.port === address.port)?.[1])
      yield* RunnerWatch.checkOnce(misses)
      assert.strictEqual(yield* healthOf(early), true, "one missed round is not enough")
      yield* RunnerWatch.checkOnce(misses)
      assert.strictEqual(yield* healthOf(early), false)
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          RunnerStorage.layerMemory,
          Layer.succeed(RunnerHealth.RunnerHealth, { isAlive: () => Effect.succeed(false) }),
          ShardingConfig.layer({ runnerAddress: Option.some(self) })
        )
      )
    )
  )

  it.effect("two runners that cannot reach each other, checking in lockstep, leave one of them healthy", () =>
    Effect.gen(function* () {
      const storage = yield* RunnerStorage.RunnerStorage
      const a = RunnerAddress.make("127.0.0.1", 2001)
      const b = RunnerAddress.make("127.0.0.1", 2002)
      yield* storage.register(runner(a), true)
      yield* storage.register(runner(b), true)
      const noAnswer = Layer.succeed(RunnerHealth.RunnerHealth, { isAlive: () => Effect.succeed(false) })
      const as = (address: RunnerAddress.RunnerAddress, misses: Map<string, number>) =>
        RunnerWatch.checkOnce(misses).pipe(
          Effect.provide(Layer.merge(noAnswer, ShardingConfig.layer({ runnerAddress: Option.some(address) })))
        )
      const missesA = new Map<string, number>()
      const missesB = new Map<string, number>()
      for (let round = 0; round < 4; round++) {
        yield* Effect.all([as(a, missesA), as(b, missesB)], { concurrency: 2 })
      }
      const health = new Map((yield* storage.getRunners).map(([r, healthy]) => [r.address.port, healthy]))
      assert.deepStrictEqual([health.get(a.port), health.get(b.port)], [true, false])
    }).pipe(Effect.provide(RunnerStorage.layerMemory))
  )
})
