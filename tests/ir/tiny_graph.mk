// RUN: build --emit=graph %root/examples/llama_tiny.mk

// CHECK:EXIT: 0
// CHECK: graph "<root>/examples/llama_tiny.mk" config tiny
// CHECK:
// CHECK: tensors  // 40
// CHECK:   %t0 embed_tokens: weight bf16[256, 64] row_major <- "model.embed_tokens.weight"
// CHECK:   %t1 layer[0].input_norm: weight bf16[64] row_major <- "model.layers.0.input_layernorm.weight"
// CHECK:   %t2 layer[0].qkv: weight bf16[128, 64] tiled(8, 64) <- "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight"
// CHECK:   %t3 layer[0].k_cache: state bf16[2, 64, 16] row_major
// CHECK:   %t4 layer[0].v_cache: state bf16[2, 64, 16] row_major
// CHECK:   %t5 layer[0].o_proj: weight bf16[64, 64] tiled(8, 64) <- "model.layers.0.self_attn.o_proj.weight"
// CHECK:   %t6 layer[0].post_norm: weight bf16[64] row_major <- "model.layers.0.post_attention_layernorm.weight"
// CHECK:   %t7 layer[0].gate_up: weight bf16[256, 64] tiled(8, 64) <- "model.layers.0.mlp.gate_proj.weight", "model.layers.0.mlp.up_proj.weight"
// CHECK:   %t8 layer[0].down: weight bf16[64, 128] tiled(8, 64) <- "model.layers.0.mlp.down_proj.weight"
// CHECK:   %t9 layer[1].input_norm: weight bf16[64] row_major <- "model.layers.1.input_layernorm.weight"
// CHECK:   %t10 layer[1].qkv: weight bf16[128, 64] tiled(8, 64) <- "model.layers.1.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight", "model.layers.1.self_attn.v_proj.weight"
// CHECK:   %t11 layer[1].k_cache: state bf16[2, 64, 16] row_major
// CHECK:   %t12 layer[1].v_cache: state bf16[2, 64, 16] row_major
// CHECK:   %t13 layer[1].o_proj: weight bf16[64, 64] tiled(8, 64) <- "model.layers.1.self_attn.o_proj.weight"
// CHECK:   %t14 layer[1].post_norm: weight bf16[64] row_major <- "model.layers.1.post_attention_layernorm.weight"
// CHECK:   %t15 layer[1].gate_up: weight bf16[256, 64] tiled(8, 64) <- "model.layers.1.mlp.gate_proj.weight", "model.layers.1.mlp.up_proj.weight"
// CHECK:   %t16 layer[1].down: weight bf16[64, 128] tiled(8, 64) <- "model.layers.1.mlp.down_proj.weight"
// CHECK:   %t17 final_norm: weight bf16[64] row_major <- "model.norm.weight"
// CHECK:   %t18 lm_head: weight bf16[256, 64] tiled(8, 64) <- "lm_head.weight"
// CHECK:   %t19 y.0: activation f32[64] row_major
// CHECK:   %t20 q.1: activation bf16[64] row_major
// CHECK:   %t21 pm.2: activation f32[2, 4] row_major
// CHECK:   %t22 pl.2: activation f32[2, 4] row_major
// CHECK:   %t23 pacc.2: activation f32[2, 64] row_major
// CHECK:   %t24 o.3: activation bf16[64] row_major
// CHECK:   %t25 y.4: activation f32[64] row_major
// CHECK:   %t26 y.5: activation bf16[128] row_major
// CHECK:   %t27 y.6: activation f32[64] row_major
// CHECK:   %t28 q.7: activation bf16[64] row_major
// CHECK:   %t29 pm.8: activation f32[2, 4] row_major
// CHECK:   %t30 pl.8: activation f32[2, 4] row_major
// CHECK:   %t31 pacc.8: activation f32[2, 64] row_major
// CHECK:   %t32 o.9: activation bf16[64] row_major
// CHECK:   %t33 y.10: activation f32[64] row_major
// CHECK:   %t34 y.11: activation bf16[128] row_major
// CHECK:   %t35 y.12: activation f32[64] row_major
// CHECK:   %t36 logits.13: activation f32[256] row_major
// CHECK:   %t37 part_max.13: activation f32[32] row_major
// CHECK:   %t38 part_idx.13: activation i32[32] row_major
// CHECK:   %t39 next.14: activation i32[] row_major
// CHECK:
// CHECK: inputs
// CHECK:   token: i32
// CHECK:   pos: i32
// CHECK: outputs
// CHECK:   logits = logits.13
// CHECK:   next = next.14
// CHECK:
// CHECK: nodes  // 15
// CHECK:   %0 = embed<C=64, D=64, V=256>(table: embed_tokens, token: input token) -> (y: y.0) tasks [1]
// CHECK:   %1 = qkv_rope_append<C=64, Dh=16, K=64, KVH=2, N=128, R=8, S=64, eps=1e-05, rope_factor=1, rope_high=4, rope_low=1, rope_orig=8192, theta=500000>(w: layer[0].qkv, norm: layer[0].input_norm, x: y.0, pos: input pos, k_cache: layer[0].k_cache, v_cache: layer[0].v_cache) -> (q: q.1) tasks [8, 1]
// CHECK:   %2 = attention_partial<C=16, Dh=16, KVH=2, NS=2, QD=64, S=64>(q: q.1, k_cache: layer[0].k_cache, v_cache: layer[0].v_cache, pos: input pos) -> (pm: pm.2, pl: pl.2, pacc: pacc.2) tasks [2, 2, 2]
// CHECK:   %3 = attention_combine<H=4, NS=2, QD=64>(pm: pm.2, pl: pl.2, pacc: pacc.2) -> (o: o.3) tasks [4]
// CHECK:   %4 = matvec_residual<C=64, K=64, N=64, R=8>(w: layer[0].o_proj, x: o.3, residual: y.0) -> (y: y.4) tasks [8]
// CHECK:   %5 = rmsnorm_swiglu<C=64, K=64, N2=256, R=8, eps=1e-05>(w: layer[0].gate_up, norm: layer[0].post_norm, x: y.4) -> (y: y.5) tasks [16]
// CHECK:   %6 = matvec_residual<C=64, K=128, N=64, R=8>(w: layer[0].down, x: y.5, residual: y.4) -> (y: y.6) tasks [8]
// CHECK:   %7 = qkv_rope_append<C=64, Dh=16, K=64, KVH=2, N=128, R=8, S=64, eps=1e-05, rope_factor=1, rope_high=4, rope_low=1, rope_orig=8192, theta=500000>(w: layer[1].qkv, norm: layer[1].input_norm, x: y.6, pos: input pos, k_cache: layer[1].k_cache, v_cache: layer[1].v_cache) -> (q: q.7) tasks [8, 1]
// CHECK:   %8 = attention_partial<C=16, Dh=16, KVH=2, NS=2, QD=64, S=64>(q: q.7, k_cache: layer[1].k_cache, v_cache: layer[1].v_cache, pos: input pos) -> (pm: pm.8, pl: pl.8, pacc: pacc.8) tasks [2, 2, 2]
// CHECK:   %9 = attention_combine<H=4, NS=2, QD=64>(pm: pm.8, pl: pl.8, pacc: pacc.8) -> (o: o.9) tasks [4]
// CHECK:   %10 = matvec_residual<C=64, K=64, N=64, R=8>(w: layer[1].o_proj, x: o.9, residual: y.6) -> (y: y.10) tasks [8]
// CHECK:   %11 = rmsnorm_swiglu<C=64, K=64, N2=256, R=8, eps=1e-05>(w: layer[1].gate_up, norm: layer[1].post_norm, x: y.10) -> (y: y.11) tasks [16]
// CHECK:   %12 = matvec_residual<C=64, K=128, N=64, R=8>(w: layer[1].down, x: y.11, residual: y.10) -> (y: y.12) tasks [8]
// CHECK:   %13 = rmsnorm_lm_head_argmax<C=64, K=64, R=8, V=256, eps=1e-05>(w: lm_head, norm: final_norm, x: y.12) -> (logits: logits.13, part_max: part_max.13, part_idx: part_idx.13) tasks [32]
// CHECK:   %14 = argmax_final<P=32>(part_max: part_max.13, part_idx: part_idx.13) -> (next: next.14) tasks [1]
// CHECK:
// CHECK: // used by %0
// CHECK: func embed<C=64, D=64, V=256>(table: bf16[256, 64], token: i32[]) -> (y: f32[64]) tasks [1] as (t) {
// CHECK:   store y[t * 64 : +64] = cast<f32>(load table[token, t * 64 : +64])  // f32[64]
// CHECK: }
// CHECK:
// CHECK: // used by %1, %7
// CHECK: func qkv_rope_append<C=64, Dh=16, K=64, KVH=2, N=128, R=8, S=64, eps=1e-05, rope_factor=1, rope_high=4, rope_low=1, rope_orig=8192, theta=500000>(w: bf16[128, 64], norm: bf16[64], x: f32[64], pos: i32[], inout k_cache: bf16[2, 64, 16], inout v_cache: bf16[2, 64, 16]) -> (q: bf16[64]) tasks [8, 1] as (h, j) {
// CHECK:   let xf: f32[64] = cast<f32>(load x[0 : +64])
// CHECK:   let inv_rms: f32[] = rsqrt(mean(xf * xf) + 1e-05)
// CHECK:   let xn: f32[64] = cast<f32>(load norm[0 : +64]) * (xf * inv_rms)
// CHECK:   let row: i32[] = h * 16 + j * 8
// CHECK:   let a: f32[8] = 0
// CHECK:   let b: f32[8] = 0
// CHECK:   for k in 0 .. 64 step 64 {
// CHECK:     let xc: f32[64] = xn[k : +64]
// CHECK:     a += rowdot(cast<f32>(load w[row : +8, k : +64]), xc)
// CHECK:     b += rowdot(cast<f32>(load w[row + 8 : +8, k : +64]), xc)
// CHECK:   }
// CHECK:   let qa: bf16[8] = cast<bf16>(a)
// CHECK:   let qb: bf16[8] = cast<bf16>(b)
// CHECK:   if h >= 6 {
// CHECK:     store v_cache[h - 4 - 2, pos, j * 8 : +8] = qa  // bf16[8]
// CHECK:     store v_cache[h - 4 - 2, pos, 8 + j * 8 : +8] = qb  // bf16[8]
// CHECK:   } else {
// CHECK:     let i2: f32[8] = cast<f32>((iota(8) + j * 8) * 2)
// CHECK:     let inv_freq: f32[8] = 1.0 / pow(5e+05, i2 / 16)
// CHECK:     let angle: f32[8] = cast<f32>(pos) * inv_freq
// CHECK:     let c: f32[8] = cos(angle)
// CHECK:     let s: f32[8] = sin(angle)
// CHECK:     let af: f32[8] = cast<f32>(qa)
// CHECK:     let bf: f32[8] = cast<f32>(qb)
// CHECK:     let ra: bf16[8] = cast<bf16>(af * c - bf * s)
// CHECK:     let rb: bf16[8] = cast<bf16>(bf * c + af * s)
// CHECK:     if h < 4 {
// CHECK:       store q[h * 16 + j * 8 : +8] = ra  // bf16[8]
// CHECK:       store q[h * 16 + 8 + j * 8 : +8] = rb  // bf16[8]
// CHECK:     } else {
// CHECK:       store k_cache[h - 4, pos, j * 8 : +8] = ra  // bf16[8]
// CHECK:       store k_cache[h - 4, pos, 8 + j * 8 : +8] = rb  // bf16[8]
// CHECK:     }
// CHECK:   }
// CHECK: }
// CHECK:
// CHECK: // used by %2, %8
// CHECK: func attention_partial<C=16, Dh=16, KVH=2, NS=2, QD=64, S=64>(q: bf16[64], k_cache: bf16[2, 64, 16], v_cache: bf16[2, 64, 16], pos: i32[]) -> (pm: f32[2, 4], pl: f32[2, 4], pacc: f32[2, 64]) tasks [2, 2, 2] as (g, i, s) {
// CHECK:   let h: i32[] = g * 2 + i
// CHECK:   let qh: bf16[16] = load q[h * 16 : +16]
// CHECK:   let scale: f32[] = rsqrt(cast<f32>(16))
// CHECK:   let per: i32[] = (pos / 32 + 1) * 16
// CHECK:   let lo: i32[] = s * per
// CHECK:   let hi: i32[] = min(lo + per, pos + 1)
// CHECK:   let m: f32[] = -inf
// CHECK:   let l: f32[] = 0.0
// CHECK:   let acc: f32[16] = 0
// CHECK:   for p0 in lo .. hi step 16 {
// CHECK:     let s_qk: f32[16] = rowdot(load k_cache[g, p0 : +16, 0 : +16], qh) * scale
// CHECK:     let sm: f32[16] = select(iota(16) + p0 < hi, s_qk, -inf)
// CHECK:     let m_new: f32[] = max(m, max(sm))
// CHECK:     let alpha: f32[] = exp(m - m_new)
// CHECK:     let p: f32[16] = exp(sm - m_new)
// CHECK:     l = l * alpha + sum(p)
// CHECK:     acc = acc * alpha + coldot(cast<f32>(load v_cache[g, p0 : +16, 0 : +16]), p)
// CHECK:     m = m_new
// CHECK:   }
// CHECK:   store pm[s, h] = m  // f32[]
// CHECK:   store pl[s, h] = l  // f32[]
// CHECK:   store pacc[s, h * 16 : +16] = acc  // f32[16]
// CHECK: }
// CHECK:
// CHECK: // used by %3, %9
// CHECK: func attention_combine<H=4, NS=2, QD=64>(pm: f32[2, 4], pl: f32[2, 4], pacc: f32[2, 64]) -> (o: bf16[64]) tasks [4] as (h) {
// CHECK:   let m: f32[2] = load pm[0 : +2, h]
// CHECK:   let w: f32[2] = exp(m - max(m))
// CHECK:   let l: f32[] = sum(load pl[0 : +2, h] * w)
// CHECK:   let acc: f32[16] = coldot(load pacc[0 : +2, h * 16 : +16], w)
// CHECK:   store o[h * 16 : +16] = cast<bf16>(acc / l)  // bf16[16]
// CHECK: }
// CHECK:
// CHECK: // used by %4, %10
// CHECK: func matvec_residual<C=64, K=64, N=64, R=8>(w: bf16[64, 64], x: bf16[64], residual: f32[64]) -> (y: f32[64]) tasks [8] as (t) {
// CHECK:   let acc: f32[8] = 0
// CHECK:   for k in 0 .. 64 step 64 {
// CHECK:     acc += rowdot(load w[t * 8 : +8, k : +64], load x[k : +64])
// CHECK:   }
// CHECK:   let wx: f32[8] = acc
// CHECK:   let res: f32[8] = load residual[t * 8 : +8]
// CHECK:   store y[t * 8 : +8] = res + wx  // f32[8]
// CHECK: }
// CHECK:
// CHECK: // used by %5, %11
// CHECK: func rmsnorm_swiglu<C=64, K=64, N2=256, R=8, eps=1e-05>(w: bf16[256, 64], norm: bf16[64], x: f32[64]) -> (y: bf16[128]) tasks [16] as (t) {
// CHECK:   let xf: f32[64] = cast<f32>(load x[0 : +64])
// CHECK:   let inv_rms: f32[] = rsqrt(mean(xf * xf) + 1e-05)
// CHECK:   let xn: f32[64] = cast<f32>(load norm[0 : +64]) * (xf * inv_rms)
// CHECK:   let gate: f32[8] = 0
// CHECK:   let up: f32[8] = 0
// CHECK:   for k in 0 .. 64 step 64 {
// CHECK:     let xc: f32[64] = xn[k : +64]
// CHECK:     gate += rowdot(cast<f32>(load w[t * 8 : +8, k : +64]), xc)
// CHECK:     up += rowdot(cast<f32>(load w[128 + t * 8 : +8, k : +64]), xc)
// CHECK:   }
// CHECK:   let act: f32[8] = silu(gate)
// CHECK:   store y[t * 8 : +8] = cast<bf16>(act * up)  // bf16[8]
// CHECK: }
// CHECK:
// CHECK: // used by %6, %12
// CHECK: func matvec_residual<C=64, K=128, N=64, R=8>(w: bf16[64, 128], x: bf16[128], residual: f32[64]) -> (y: f32[64]) tasks [8] as (t) {
// CHECK:   let acc: f32[8] = 0
// CHECK:   for k in 0 .. 128 step 64 {
// CHECK:     acc += rowdot(load w[t * 8 : +8, k : +64], load x[k : +64])
// CHECK:   }
// CHECK:   let wx: f32[8] = acc
// CHECK:   let res: f32[8] = load residual[t * 8 : +8]
// CHECK:   store y[t * 8 : +8] = res + wx  // f32[8]
// CHECK: }
// CHECK:
// CHECK: // used by %13
// CHECK: func rmsnorm_lm_head_argmax<C=64, K=64, R=8, V=256, eps=1e-05>(w: bf16[256, 64], norm: bf16[64], x: f32[64]) -> (logits: f32[256], part_max: f32[32], part_idx: i32[32]) tasks [32] as (t) {
// CHECK:   let xf: f32[64] = cast<f32>(load x[0 : +64])
// CHECK:   let inv_rms: f32[] = rsqrt(mean(xf * xf) + 1e-05)
// CHECK:   let xn: f32[64] = cast<f32>(load norm[0 : +64]) * (xf * inv_rms)
// CHECK:   let acc: f32[8] = 0
// CHECK:   for k in 0 .. 64 step 64 {
// CHECK:     acc += rowdot(cast<f32>(load w[t * 8 : +8, k : +64]), xn[k : +64])
// CHECK:   }
// CHECK:   let lg: f32[8] = acc
// CHECK:   store logits[t * 8 : +8] = lg  // f32[8]
// CHECK:   store part_max[t] = max(lg)  // f32[]
// CHECK:   store part_idx[t] = argmax(lg) + t * 8  // i32[]
// CHECK: }
// CHECK:
// CHECK: // used by %14
// CHECK: func argmax_final<P=32>(part_max: f32[32], part_idx: i32[32]) -> (next: i32[]) tasks [1] as (t) {
// CHECK:   let best: i32[] = argmax(load part_max[0 : +32])
// CHECK:   store next[] = load part_idx[best]  // i32[]
// CHECK: }
