import torch, sys
def load(p):
    ns={}; exec(open(p).read(), ns); return ns
for ref,cand in zip(sys.argv[1::2], sys.argv[2::2]):
    r=load(ref); c=load(cand); torch.manual_seed(0)
    xs=r['get_inputs'](); a=r['Model'](*r['get_init_inputs']())(*xs); b=c['ModelNew'](*r['get_init_inputs']())(*xs)
    print(ref, cand, "on get_inputs(): max abs diff", float((a.float()-b.float()).abs().max()), "ref max", float(a.float().abs().max()), "allclose(1e-3)", torch.allclose(a.float(),b.float(),rtol=1e-3,atol=1e-3))
