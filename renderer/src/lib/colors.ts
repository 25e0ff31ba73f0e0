import { KINDS, type Kind } from './session-index';
import type { LaneState } from './hand-lanes';

/** Colours canvases draw with, read from the CSS variables of the current theme. */
export interface Palette {
  kind: Record<Kind, string>;
  lane: Record<LaneState, string>;
  hands: string[];
  text: string;
  muted: string;
  line: string;
  accent: string;
  bg: string;
  panel: string;
  selection: string;
}

const LANE_STATES: LaneState[] = ['held', 'provisioning', 'ready', 'busy', 'lost', 'gone'];
let cached: Palette | null = null;

/** The palette (cached; dropped when the colour scheme changes). */
export function palette(): Palette {
  if (cached) return cached;
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim() || '#888';
  cached = {
    kind: Object.fromEntries(KINDS.map((k) => [k, v(`--k-${k}`)])) as Record<Kind, string>,
    lane: Object.fromEntries(LANE_STATES.map((s) => [s, v(`--lane-${s}`)])) as Record<LaneState, string>,
    hands: [0, 1, 2, 3, 4, 5].map((i) => v(`--hand-${i}`)),
    text: v('--text'),
    muted: v('--muted'),
    line: v('--line'),
    accent: v('--accent'),
    bg: v('--bg'),
    panel: v('--panel'),
    selection: v('--selection'),
  };
  return cached;
}

const listeners = new Set<() => void>();
if (typeof window !== 'undefined' && window.matchMedia) {
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    cached = null;
    listeners.forEach((l) => l());
  });
}

/** Calls `l` when the theme changes (canvases redraw). */
export function onThemeChange(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** A canvas sized for the device's pixels; returns its 2D context scaled to CSS pixels. */
export function fitCanvas(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D | null {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(width * dpr));
  const h = Math.max(1, Math.round(height * dpr));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  ctx?.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}
