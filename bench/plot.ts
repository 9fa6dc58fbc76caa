/**
 * A small SVG line chart for the bench's curves (`Curve` in report.ts): x on
 * a log-10 scale (the work doubles by tens: 1, 10, 100, 1,000 concurrent
 * turns), y linear from 0, one coloured line with dots per series and a
 * legend. No dependency: the chart is a few dozen elements, written as text.
 *
 * `writeCurves(curves)` writes each to `bench/<curve.file>` and returns the
 * paths written; `svgOf(curve)` is the text alone.
 */
import { writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Curve } from "./report.ts"

const plotArea = { width: 392, height: 308 }
const margin = { left: 72, top: 40, bottom: 52 }
const colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]

const escapeXml = (text: string): string =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")

/** 1, 2, 5 × a power of ten at or above `value` (the y axis's top). */
const niceCeiling = (value: number): number => {
  if (!(value > 0)) return 1
  const power = 10 ** Math.floor(Math.log10(value))
  return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power
}

/** A tick label: 1,000 not 1000; 0.5 not 0.5000. */
const label = (value: number): string =>
  value >= 1000 ? value.toLocaleString("en-US", { maximumFractionDigits: 0 }) : String(Number(value.toPrecision(3)))

/** The chart of one curve, as SVG text. */
export const svgOf = (curve: Curve): string => {
  // the legend's column fits the longest name (about 7 px a character at 12 px)
  const right = 40 + 7 * Math.max(10, ...curve.series.map((series) => series.name.length))
  const width = margin.left + plotArea.width + right
  const height = margin.top + plotArea.height + margin.bottom
  const points = curve.series.flatMap((series) => series.points.filter(([x, y]) => x > 0 && Number.isFinite(y)))
  const xs = points.map(([x]) => x)
  const minX = Math.min(...xs, 1)
  const maxX = Math.max(...xs, 10)
  const top = niceCeiling(Math.max(...points.map(([, y]) => y), 0))
  const plotWidth = plotArea.width
  const plotHeight = plotArea.height
  const span = Math.log10(maxX) - Math.log10(minX) || 1
  const px = (x: number) => margin.left + ((Math.log10(x) - Math.log10(minX)) / span) * plotWidth
  const py = (y: number) => margin.top + plotHeight - (y / top) * plotHeight
  const parts: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12" role="img" aria-label="${escapeXml(curve.title)}">`,
    `<title>${escapeXml(curve.title)}</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${margin.left}" y="22" font-size="14" font-weight="bold">${escapeXml(curve.title)}</text>`
  ]
  // y grid and ticks: five steps from 0 to the top
  for (let i = 0; i <= 5; i++) {
    const value = (top * i) / 5
    const y = py(value).toFixed(1)
    parts.push(
      `<line x1="${margin.left}" x2="${margin.left + plotWidth}" y1="${y}" y2="${y}" stroke="#ddd"/>`,
      `<text x="${margin.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${label(value)}</text>`
    )
  }
  // x ticks: each power of ten in range
  for (let power = Math.ceil(Math.log10(minX)); 10 ** power <= maxX; power++) {
    const x = px(10 ** power).toFixed(1)
    parts.push(
      `<line x1="${x}" x2="${x}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#eee"/>`,
      `<text x="${x}" y="${margin.top + plotHeight + 16}" text-anchor="middle">${label(10 ** power)}</text>`
    )
  }
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#888"/>`,
    `<text x="${margin.left + plotWidth / 2}" y="${height - 12}" text-anchor="middle">${escapeXml(curve.x)}</text>`,
    `<text transform="translate(16 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">${escapeXml(curve.y)}</text>`
  )
  curve.series.forEach((series, i) => {
    const colour = colours[i % colours.length] ?? "#000"
    const shown = series.points.filter(([x, y]) => x > 0 && Number.isFinite(y))
    if (shown.length > 0) {
      const path = shown.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ")
      parts.push(`<polyline points="${path}" fill="none" stroke="${colour}" stroke-width="2"/>`)
      for (const [x, y] of shown) {
        parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3.5" fill="${colour}"/>`)
      }
    }
    const legendY = margin.top + 12 + i * 20
    const legendX = margin.left + plotWidth + 16
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 18}" y1="${legendY}" y2="${legendY}" stroke="${colour}" stroke-width="2"/>`,
      `<text x="${legendX + 24}" y="${legendY}" dominant-baseline="middle">${escapeXml(series.name)}</text>`
    )
  })
  parts.push("</svg>", "")
  return parts.join("\n")
}

const benchDirectory = dirname(fileURLToPath(import.meta.url))

/** Writes each curve to `bench/<file>`; returns the paths written. */
export const writeCurves = (curves: ReadonlyArray<Curve>): ReadonlyArray<string> =>
  curves.map((curve) => {
    if (!/^[\w.-]+\.svg$/.test(curve.file)) throw new Error(`a curve's file must be a plain .svg name: ${curve.file}`)
    const path = join(benchDirectory, curve.file)
    writeFileSync(path, svgOf(curve))
    return path
  })
