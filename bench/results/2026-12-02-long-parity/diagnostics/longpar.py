import sys, os, json, math, time, argparse, subprocess
sys.path.insert(0, "scripts")
import numpy as np, torch
import gpu_parity as gp
ap = argparse.ArgumentParser()
ap.add_argument("--ptx"); ap.add_argument("--steps", type=int); ap.add_argument("--init", default="hf")
ap.add_argument("--seed", type=int, default=1); ap.add_argument("--out")
a = ap.parse_args()
meta = json.load(open(a.ptx.replace(".ptx", ".meta.json"))); cv = meta["config_values"]
import transformers
from transformers import LlamaForCausalLM
cfg, rope = gp.make_config(cv, torch, transformers)
torch.manual_seed(a.seed)
with torch.device("cuda"):
    model = LlamaForCausalLM(cfg)
if a.init == "scaled":
    gp.reinit(model, a.seed, "cuda", torch)
model = model.to(torch.bfloat16)
wdir = "/tmp/w-" + os.path.basename(a.ptx)
model.save_pretrained(wdir, max_shard_size="2GB")
del model; torch.cuda.empty_cache()
g = torch.Generator().manual_seed(a.seed + 1)
toks = torch.randint(0, int(cv["vocab"]), (a.steps,), generator=g).tolist()
mk_npy = "/tmp/mk.npy"
t0 = time.time()
r = subprocess.run(["build-exp/mkrt-run", "--ptx", a.ptx, "--weights", wdir, "--tokens", ",".join(map(str, toks)), "--max-new", "0", "--dump-logits", mk_npy], capture_output=True, text=True)
print(r.stderr[-300:], "mkrt", time.time() - t0)
mk = np.load(mk_npy)
torch.set_float32_matmul_precision("highest")
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
res = {}
for tag, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
    m = gp.load_model(wdir, dt, torch).to("cuda").eval()
    with torch.no_grad():
        lg = m(input_ids=torch.tensor([toks], device="cuda"), use_cache=False).logits[0].float()
    res[tag] = lg
    del m; torch.cuda.empty_cache()
f32 = res["f32"]; mkt = torch.from_numpy(mk).cuda()
def rel(x, y): return (torch.linalg.norm(x - y, dim=1) / torch.linalg.norm(y, dim=1)).cpu().numpy()
e_mk = rel(mkt, f32); e_bf = rel(res["bf16"], f32)
am = (mkt.argmax(1) == f32.argmax(1)).float().cpu().numpy()
W = max(1, a.steps // 16)
print(f"== {a.ptx} init={a.init} steps={a.steps}")
for lo in range(0, a.steps, W):
    print(f"  pos {lo:5d}-{lo+W-1:5d}: mk max {e_mk[lo:lo+W].max():.3e} mean {e_mk[lo:lo+W].mean():.3e} | hf bf16 max {e_bf[lo:lo+W].max():.3e} | argmax eq {am[lo:lo+W].mean():.3f}")
np.save(os.path.join(a.out, os.path.basename(a.ptx) + f".{a.init}.curve.npy"), np.stack([e_mk, e_bf]))
import shutil; shutil.rmtree(wdir)
