// RUN: build --emit=graph --set layers=1 %root/examples/llama.mk

// CHECK:EXIT: 0
// CHECK: graph "<root>/examples/llama.mk" config llama_3_2_1b
// CHECK:
// CHECK: tensors  // 24
// CHECK:   %t0 embed_tokens: weight bf16[128256, 2048] row_major <- "model.embed_tokens.weight"
// CHECK:   %t1 layer[0].input_norm: weight bf16[2048] row_major <- "model.layers.0.input_layernorm.weight"
// CHECK:   %t2 layer[0].qkv: weight bf16[3072, 2048] tiled(16, 1024) <- "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight"
// CHECK:   %t3 layer[0].k_cache: state bf16[8, 4096, 64] row_major
// CHECK:   %t4 layer[0].v_cache: state bf16[8, 4096, 64] row_major
// CHECK:   %t5 layer[0].o_proj: weight bf16[2048, 2048] tiled(16, 1024) <- "model.layers.0.self_attn.o_proj.weight"
// CHECK:   %t6 layer[0].post_norm: weight bf16[2048] row_major <- "model.layers.0.post_attention_layernorm.weight"
// CHECK:   %t7 layer[0].gate_up: weight bf16[16384, 2048] tiled(64, 256) <- "model.layers.0.mlp.gate_proj.weight", "model.layers.0.mlp.up_proj.weight"
// CHECK:   %t8 layer[0].down: weight bf16[2048, 8192] tiled(16, 1024) <- "model.layers.0.mlp.down_proj.weight"
// CHECK:   %t9 final_norm: weight bf16[2048] row_major <- "model.norm.weight"
// CHECK:   %t10 lm_head: weight bf16[128256, 2048] tiled(128, 128) <- "lm_head.weight"
// CHECK:   %t11 y.0: activation f32[2048] row_major
// CHECK:   %t12 q.1: activation bf16[2048] row_major
// CHECK:   %t13 pm.2: activation f32[4, 32] row_major
// CHECK:   %t14 pl.2: activation f32[4, 32] row_major
// CHECK:   %t15 pacc.2: activation f32[4, 2048] row_major
// CHECK:   %t16 o.3: activation bf16[2048] row_major
// CHECK:   %t17 y.4: activation f32[2048] row_major
// CHECK:   %t18 y.5: activation bf16[8192] row_major
// CHECK:   %t19 y.6: activation f32[2048] row_major
// CHECK:   %t20 logits.7: activation f32[128256] row_major
// CHECK:   %t21 part_max.7: activation f32[1002] row_major
// CHECK:   %t22 part_idx.7: activation i32[1002] row_major
// CHECK:   %t23 next.8: activation i32[] row_major
// CHECK:
// CHECK: inputs
// CHECK:   token: i32
// CHECK:   pos: i32
// CHECK: outputs
// CHECK:   logits = logits.7
// CHECK:   next = next.8
// CHECK:
// CHECK: nodes  // 9
// CHECK:   %0 = embed<C=64, D=2048, V=128256>(table: embed_tokens, token: input token) -> (y: y.0) tasks [32]
// CHECK:   %1 = qkv_rope_append<C=1024, Dh=64, K=2048, KVH=8, N=3072, R=16, S=4096, eps=1e-05, rope_factor=32, rope_high=4, rope_low=1, rope_orig=8192, theta=500000>(w: layer[0].qkv, norm: layer[0].input_norm, x: y.0, pos: input pos, k_cache: layer[0].k_cache, v_cache: layer[0].v_cache) -> (q: q.1) tasks [48, 2]
// CHECK:   %2 = attention_partial<C=128, Dh=64, KVH=8, NS=4, QD=2048, S=4096>(q: q.1, k_cache: layer[0].k_cache, v_cache: layer[0].v_cache, pos: input pos) -> (pm: pm.2, pl: pl.2, pacc: pacc.2) tasks [8, 4, 4]
// CHECK:   %3 = attention_combine<H=32, NS=4, QD=2048>(pm: pm.2, pl: pl.2, pacc: pacc.2) -> (o: o.3) tasks [32]
// CHECK:   %4 = matvec_residual<C=1024, K=2048, N=2048, R=16>(w: layer[0].o_proj, x: o.3, residual: y.0) -> (y: y.4) tasks [128]
// CHECK:   %5 = rmsnorm_swiglu<C=256, K=2048, N2=16384, R=64, eps=1e-05>(w: layer[0].gate_up, norm: layer[0].post_norm, x: y.4) -> (y: y.5) tasks [128]
// CHECK:   %6 = matvec_residual<C=1024, K=8192, N=2048, R=16>(w: layer[0].down, x: y.5, residual: y.4) -> (y: y.6) tasks [128]
// CHECK:   %7 = rmsnorm_lm_head_argmax<C=128, K=2048, R=128, V=128256, eps=1e-05>(w: lm_head, norm: final_norm, x: y.6) -> (logits: logits.7, part_max: part_max.7, part_idx: part_idx.7) tasks [1002]
// CHECK:   %8 = argmax_final<P=1002>(part_max: part_max.7, part_idx: part_idx.7) -> (next: next.8) tasks [1]
// CHECK:
// CHECK: // used by %0
// CHECK: func embed<C=64, D=2048, V=128256>(table: bf16[128256, 2048], token: i32[]) -> (y: f32[2048]) tasks [32] as (t) {
// CHECK:   store y[t * 64 : +64] = cast<f32>(load table[token, t * 64 : +64])  // f32[64]
// CHECK: }
// CHECK:
// CHECK: // used by %1
// CHECK: func qkv_rope_append<C=1024, Dh=64, K=2048, KVH=8, N=3072, R=16, S=4096, eps=1e-05, rope_factor=32, rope_high=4, rope_low=1, rope_orig=8192, theta=500000>(w: bf16[3072, 2048], norm: bf16[2048], x: f32[2048], pos: i32[], inout k_cache: bf16[8, 4096, 64], inout v_cache: bf16[8, 4096, 64]) -> (q: bf16[2048]) tasks [48, 2] as (h, j) {
// CHECK:   let xf: f32[2048] = cast<f32>(load x[0 : +2048])
// CHECK:   let inv_rms: f32[] = rsqrt(mean(xf * xf) + 1e-05)
// CHECK:   let xn: f32[2048] = cast<f32>(load norm[0 : +2048]) * (xf * inv_rms)
// CHECK:   let row: i32[] = h * 64 + j * 16
// CHECK:   let a: f32[16] = 0
// CHECK:   let b: f32[16] = 0
// CHECK:   for k in 0 .. 2048 step 1024 {
// CHECK:     let xc: f32[1024] = xn[k : +1024]
// CHECK:     a += rowdot(cast<f32>(load w[row : +16, k : +1024]), xc)
// CHECK:     b += rowdot(cast<f32>(load w[row + 32 : +16, k : +1024]), xc)
// CHECK:   }
// CHECK:   let qa: bf16[16] = cast<bf16>(a)
// CHECK:   let qb: bf16[16] = cast<bf16>(b)
// CHECK:   if h >= 40 {
// CHECK:     store v_cache[h - 32 - 8, pos, j * 16 : +16] = qa  // bf16[16]
// CHECK:     store v_cache[h - 32 - 8, pos, 32 + j * 16 : +16] = qb  // bf16[16]
// CHECK:   } else {
// CHECK:     let i2: f32[16] = cast<f32>((iota(16) + j * 16) * 2)
// CHECK:     let inv_freq: f32[16] = 1.0 / pow(5e+05, i2 / 64)
// CHECK:     let wavelen: f32[16] = 6.283185307179586 / inv_freq
// CHECK:     let smooth: f32[16] = (8192.0 / wavelen - 1.0) / 3.0
// CHECK:     let medium: f32[16] = (1.0 - smooth) * inv_freq / 32.0 + smooth * inv_freq
// CHECK:     inv_freq = select(wavelen < 2048.0, inv_freq, select(wavelen > 8192.0, inv_freq / 32.0, medium))
// CHECK:     let angle: f32[16] = cast<f32>(pos) * inv_freq
// CHECK:     let c: f32[16] = cos(angle)
// CHECK:     let s: f32[16] = sin(angle)
// CHECK:     let af: f32[16] = cast<f32>(qa)
// CHECK:     let bf: f32[16] = cast<f32>(qb)
// CHECK:     let ra: bf16[16] = cast<bf16>(af * c - bf * s)
// CHECK:     let rb: bf16[16] = cast<bf16>(bf * c + af * s)
// CHECK:     if h < 32 {
// CHECK:       store q[h * 64 + j * 16 : +16] = ra  // bf16[16]
// CHECK:       store q[h * 64 + 32 + j * 16 : +16] = rb  // bf16[16]
// CHECK:     } else {
// CHECK:       store k_cache[h - 32, pos, j * 16 : +16] = ra  // bf16[16]
// CHECK:       store k_cache[h - 32, pos, 32 + j * 16 : +16] = rb  // bf16[16]
// CHECK:     }
// CHECK:   }
// CHECK: }
// CHECK:
// CHECK: // used by %2
// CHECK: func attention_partial<C=128, Dh=64, KVH=8, NS=4, QD=2048, S=4096>(q: bf16[2048], k_cache: bf16[8, 4096, 64], v_cache: bf16[8, 4096, 64], pos: i32[]) -> (pm: f32[4, 32], pl: f32[4, 32], pacc: f32[4, 2048]) tasks [8, 4, 4] as (g, i, s) {
// CHECK:   let h: i32[] = g * 4 + i
// CHECK:   let qh: bf16[64] = load q[h * 64 : +64]
// CHECK:   let scale: f32[] = rsqrt(cast<f32>(64))
// CHECK:   let per: i32[] = (pos / 512 + 1) * 128
// CHECK:   let lo: i32[] = s * per
// CHECK:   let hi: i32[] = min(lo + per, pos + 1)
// CHECK:   let m: f32[] = -inf
// CHECK:   let l: f32[] = 0.0
// CHECK:   let acc: f32[64] = 0
// CHECK:   for p0 in lo .. hi step 128 {
// CHECK:     let s_qk: f32[128] = rowdot(load k_cache[g, p0 : +128, 0 : +64], qh) * scale
// CHECK:     let sm: f32[128] = select(iota(128) + p0 < hi, s_qk, -inf)
// CHECK:     let m_new: f32[] = max(m, max(sm))
// CHECK:     let alpha: f32[] = exp(m - m_new)
// CHECK:     let p: f32[128] = exp(sm - m_new)
// CHECK:     l = l * alpha + sum(p)
// CHECK:     acc = acc * alpha + coldot(cast<f32>(load v_cache[g, p0 : +128, 0 : +64]), p)
// CHECK:     m = m_new
// CHECK:   }
// CHECK:   store pm[s, h] = m  // f32[]
// CHECK:   store pl[s, h] = l  // f32[]
// CHECK:   store pacc[s, h * 64 : +64] = acc  // f32[64]
// CHECK: }
// CHECK:
// CHECK: // used by %3
// CHECK: func attention_combine<H=32, NS=4, QD=2048>(pm: f32[4, 32], pl: f32[4, 32], pacc: f32[4, 2048]) -> (o: bf16[2048]) tasks [32] as (h) {
// CHECK:   let m: f32[4] = load pm[0 : +4, h]
// CHECK:   let w: f32[4] = exp(m - max(m))
// CHECK:   let l: f32[] = sum(load pl[0 : +4, h] * w)
// CHECK:   let acc: f32[64] = coldot(load pacc[0 : +4, h * 64 : +64], w)
// CHECK:   store o[h * 64 : +64] = cast<bf16>(acc / l)  // bf16[64]
// CHECK: }
// CHECK:
// CHECK: // used by %4
// CHECK: func matvec_residual<C=1024, K=2048, N=2048, R=16>(w: bf16[2048, 2048], x: bf16[2048], residual: f32[2048]) -> (y: f32[2048]) tasks [128] as (t) {
// CHECK:   let acc: f32[16] = 0
// CHECK:   for k in 0 .. 2048 step 1024 {
// CHECK:     acc += rowdot(load w[t * 16 : +16, k : +1024], load x[k : +1024])
// CHECK:   }
// CHECK:   let wx: f32[16] = acc
// CHECK:   let res: f32[16] = load residual[t * 16 : +16]
// CHECK:   store y[t * 16 : +16] = res + wx  // f32[16]
// CHECK: }
// CHECK:
// CHECK: // used by %5
// CHECK: func rmsnorm_swiglu<C=256, K=2048, N2=16384, R=64, eps=1e-05>(w: bf16[16384, 2048], norm: bf16[2048], x: f32[2048]) -> (y: bf16[8192]) tasks [128] as (t) {
// CHECK:   let xf: f32[2048] = cast<f32>(load x[0 : +2048])
// CHECK:   let inv_rms: f32[] = rsqrt(mean(xf * xf) + 1e-05)
// CHECK:   let xn: f32[2048] = cast<f32>(load norm[0 : +2048]) * (xf * inv_rms)
// CHECK:   let gate: f32[64] = 0
// CHECK:   let up: f32[64] = 0
// CHECK:   for k in 0 .. 2048 step 256 {
// CHECK:     let xc: f32[256] = xn[k : +256]
// CHECK:     gate += rowdot(cast<f32>(load w[t * 64 : +64, k : +256]), xc)
// CHECK:     up += rowdot(cast<f32>(load w[8192 + t * 64 : +64, k : +256]), xc)
// CHECK:   }
// CHECK:   let act: f32[64] = silu(gate)
// CHECK:   store y[t * 64 : +64] = cast<bf16>(act * up)  // bf16[64]
// CHECK: }
// CHECK:
// CHECK: // used by %6
// CHECK: func matvec_residual<C=1024, K=8192, N=2048, R=16>(w: bf16[2048, 8192], x: bf16[8192], residual: f32[2048]) -> (y: f32[2048]) tasks [128] as (t) {
// CHECK:   let acc: f32[16] = 0
// CHECK:   for k in 0 .. 8192 step 1024 {
// CHECK:     acc += rowdot(load w[t * 16 : +16, k : +1024], load x[k : +1024])
// CHECK:   }
// CHECK:   let wx: f32[16] = acc
// CHECK:   let res: f32[16] = load residual[t * 16 : +16]
// CHECK:   store y[t * 16 : +16] = res + wx  // f32[16]
// CHECK: }
// CHECK:
// CHECK: // used by %7
// CHECK: func rmsnorm_lm_head_argmax<C=128, K=2048, R=128, V=128256, eps=1e-05>(w: bf16[128256, 2048], norm: bf16[2048], x: f32[2048]) -> (logits: f32[128256], part_max: f32[1002], part_idx: i32[1002]) tasks [1002] as (t) {
// CHECK:   let xf: f32[2048] = cast<f32>(load x[0 : +2048])
// CHECK:   let inv_rms: f32[] = rsqrt(mean(xf * xf) + 1e-05)
// CHECK:   let xn: f32[2048] = cast<f32>(load norm[0 : +2048]) * (xf * inv_rms)
// CHECK:   let acc: f32[128] = 0
// CHECK:   for k in 0 .. 2048 step 128 {
// CHECK:     acc += rowdot(cast<f32>(load w[t * 128 : +128, k : +128]), xn[k : +128])
// CHECK:   }
// CHECK:   let lg: f32[128] = acc
// CHECK:   store logits[t * 128 : +128] = lg  // f32[128]
// CHECK:   store part_max[t] = max(lg)  // f32[]
// CHECK:   store part_idx[t] = argmax(lg) + t * 128  // i32[]
// CHECK: }
// CHECK:
// CHECK: // used by %8
// CHECK: func argmax_final<P=1002>(part_max: f32[1002], part_idx: i32[1002]) -> (next: i32[]) tasks [1] as (t) {
// CHECK:   let best: i32[] = argmax(load part_max[0 : +1002])
// CHECK:   store next[] = load part_idx[best]  // i32[]
// CHECK: }
