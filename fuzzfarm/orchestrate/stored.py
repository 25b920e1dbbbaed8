"""The campaign a ``fuzzfarm run`` loads from a file or resumes from a results directory:
found, read and checked before anything starts (a bad file, a directory with nothing to
resume or a selector that matches no device is one line and exit status 2)."""
from __future__ import annotations

import os

from fuzzfarm.orchestrate.run import UsageError

__all__ = ["resume_target", "stored_campaign"]


def resume_target(out: str):
    """(run id, fuzzfarm.orchestrate.campaign.Campaign) of the latest unfinished campaign in ``out``
    (its journal and stats are read through once, to find damage now).  Raises
    UsageError naming the problem (no such directory, nothing to resume, a corrupt
    campaign file)."""
    import json

    from fuzzfarm.orchestrate.campaign import Campaign
    from fuzzfarm.store import dataset as store
    if not os.path.isdir(out):
        raise UsageError(f"--resume {out!r}: no such results directory")
    try:
        run_id = store.latest_campaign(out, unfinished=True)
    except store.StoreError as exc:
        raise UsageError(f"--resume {out!r}: {exc}") from None
    if run_id is None:
        raise UsageError(f"--resume {out!r}: no unfinished campaign there")
    path = store.campaign_dir(out, run_id) / "campaign.json"
    try:
        store.read_journal(store.campaign_dir(out, run_id) / "journal.jsonl")
        store.read_stats(out, run_id)
        return run_id, Campaign.from_dict(json.loads(path.read_text()))
    except store.StoreError as exc:
        raise UsageError(f"--resume {out!r}: {exc}") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--resume {out!r}: {str(path)!r} is unreadable or corrupt "
                         f"({exc})") from None


def stored_campaign(campaign_file, resume_dir, device, address, out, default_out: bool,
                    given: list = ()):
    """(run id or None, Campaign, results directory, whether this call created it) of
    ``run --campaign`` or ``run --resume``: the campaign loaded (``--device`` overriding
    its devices) or the one to resume, for local devices its selectors checked before Ray
    starts, and then (so that bad input creates no directory) the directory checked
    writable.  ``given``: the
    options of what to run the command was also given (each a UsageError: the campaign
    says what to run).  Raises UsageError or CampaignError (one line)."""
    from dataclasses import replace

    if campaign_file and resume_dir:
        raise UsageError("--campaign and --resume exclude each other (a resumed campaign "
                         "is the one stored in DIR)")
    if given:
        raise UsageError(f"{given[0]} cannot be combined with "
                         f"{'--campaign' if campaign_file else '--resume'}: the campaign "
                         f"says what to run")

    from fuzzfarm.device.discovery import DeviceSelectionError, list_devices, select_devices
    from fuzzfarm.orchestrate import campaign as campaigns
    from fuzzfarm.store import dataset as store
    run_id = None
    if resume_dir:
        run_id, camp = resume_target(resume_dir)
        out = resume_dir
    else:
        camp = campaigns.load(campaign_file)
        if default_out:
            out = camp.out or out
        if device:          # the same campaign on other devices
            camp = replace(camp, devices=(device,))
    if not address:         # local devices: check the selectors before Ray starts
        try:
            select_devices(",".join(camp.devices), list_devices())
        except DeviceSelectionError as exc:
            if device and not resume_dir:       # the override's own words
                raise UsageError(str(exc)) from None
            raise camp.error("devices", str(exc).replace("--device ", "selector "))
    created = not os.path.exists(out)
    try:                    # last: bad input creates no directory
        store.check_writable(out)
    except store.StoreError as exc:
        raise UsageError(str(exc)) from None
    return run_id, camp, out, created
