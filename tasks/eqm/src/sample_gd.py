# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
A minimal sampling script for EqM using PyTorch DDP.
"""
# rcb: trimmed. main() (DDP set-up, checkpoint and VAE loading, PNG/.npz writing) and the
# argparse block are removed; the gradient-descent sampling loop of main() is kept, its
# lines unchanged, in sample_gd() below. The authors' command-line defaults were
# --sampler gd (choices gd, ngd), --stepsize 0.0017 ("step size eta"),
# --mu 0.3 ("NAG-GD hyperparameter mu"), --num-sampling-steps 250, --cfg-scale 4.0.
import torch


def sample_gd(model_fn, z, y, args):
    """
    Samples from an EqM model by descending its learned landscape (the loop of main()).
    model_fn(x, t, y, cfg_scale): ema.forward, or ema.forward_with_cfg when args.cfg_scale > 1
    z: (n, C, H, W) initial noise; y: (n,) class labels
    args: sampler ('gd' or 'ngd'), stepsize, mu, num_sampling_steps, cfg_scale
    Returns the samples, (n, C, H, W).
    """
    device = z.device
    n = z.shape[0]
    use_cfg = args.cfg_scale > 1.0
    # <paper2code name="equilibrium gradient descent sampler">
    with torch.no_grad():
        t = torch.ones((n,)).to(z).to(device)
        if use_cfg:
            z = torch.cat([z, z], 0)
            y_null = torch.tensor([1000] * n, device=device)
            y = torch.cat([y, y_null], 0)
            model_kwargs = dict(y=y, cfg_scale=args.cfg_scale)
            t = torch.cat([t, t], 0)
        else:
            model_kwargs = dict(y=y)
        # <paper2code name="gradient descent sampling">
        xt = z
        m = torch.zeros_like(xt).to(xt).to(device)
        for i in range(args.num_sampling_steps-1):
            if args.sampler == 'gd':
                out = model_fn(xt, t, y, args.cfg_scale)
                if not torch.is_tensor(out):
                    out = out[0]
            # <paper2code name="nesterov look-ahead">
            if args.sampler == 'ngd':
                x_ = xt + args.stepsize*m*args.mu
                out = model_fn(x_, t, y, args.cfg_scale)
                if not torch.is_tensor(out):
                    out = out[0]
                m = out
            # </paper2code name="nesterov look-ahead">
            
            xt = xt + out*args.stepsize
            t += args.stepsize
        if use_cfg:
            xt, _ = xt.chunk(2, dim=0)
        # </paper2code name="gradient descent sampling">
    return xt
    # </paper2code name="equilibrium gradient descent sampler">
