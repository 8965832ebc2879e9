#!/usr/bin/env python3
"""Opens ramus's hierarchical output with VTK's own readers (`pip install vtk`) and checks
it against the run's summary.json: the `.vthb` with vtkXMLUniformGridAMRReader (levels,
blocks per level, array names, value ranges; the blanking from the box files), the
`.pvd` as XML with every output it names opened by the AMR reader.

    python3 scripts/vtk_check.py OUT/cavity.vthb [OUT/fields.pvd]

Exits non-zero on the first mismatch."""
import json
import os
import sys

import vtk
from vtk.util.numpy_support import vtk_to_numpy


def check_vthb(path):
    out = os.path.dirname(path)
    summary = json.load(open(os.path.join(out, "summary.json")))
    dim = summary["dim"]
    cells_per_block = 4 ** dim
    r = vtk.vtkXMLUniformGridAMRReader()
    r.SetFileName(path)
    r.Update()
    amr = r.GetOutput()
    levels = amr.GetNumberOfLevels()
    files = {}
    for line in open(path):
        if "<Block " in line:
            lev = int(line.split('level="')[1].split('"')[0])
            files[lev] = []
        elif "<DataSet " in line:
            files[lev].append(line.split('file="')[1].split('"')[0])
    blocks = summary["blocks_per_level"]
    used = [b for b in blocks if b > 0]
    assert levels == len(used), f"{levels} levels in the file, {len(used)} in the forest"
    leaf_cells = 0
    for l in range(levels):
        n = amr.GetNumberOfBlocks(l)
        cells = 0
        lo, hi = float("inf"), float("-inf")
        for i in range(n):
            g = amr.GetDataSetAsImageData(l, i)
            cd = g.GetCellData()
            names = [cd.GetArrayName(k) for k in range(cd.GetNumberOfArrays())]
            for want in ["rho", "u", "vorticity", "level", "solid", "vtkGhostType"]:
                assert want in names, f"level {l} box {i}: no {want} in {names}"
            cells += g.GetNumberOfCells()
            rho = vtk_to_numpy(cd.GetArray("rho"))
            # The AMR reader leaves blanking to its consumers (its vtkGhostType is all 0,
            # as for files VTK's own vtkXMLUniformGridAMRWriter writes): read the box's
            # file as an image for the blanking ramus wrote.
            f = vtk.vtkXMLImageDataReader()
            f.SetFileName(os.path.join(out, files[l][i]))
            f.Update()
            ghost = vtk_to_numpy(f.GetOutput().GetCellData().GetArray("vtkGhostType"))
            lv = vtk_to_numpy(cd.GetArray("level"))
            assert (lv == l).all(), f"level array on level {l}"
            leaf_cells += int((ghost & 8 == 0).sum())
            lo, hi = min(lo, rho.min()), max(hi, rho.max())
        assert cells == blocks[l] * cells_per_block, f"level {l}: {cells} cells, forest has {blocks[l]} blocks"
        print(f"level {l}: {n} boxes, {cells} cells = {blocks[l]} blocks x {cells_per_block}; rho in [{lo:.6f}, {hi:.6f}]")
    want = sum(summary["leaf_cells_per_level"])
    assert leaf_cells == want, f"{leaf_cells} unblanked cells, forest has {want} leaf cells"
    print(f"{path}: {levels} levels, {leaf_cells} unblanked cells = the forest's leaf cells: OK")


def check_pvd(path):
    # The .pvd reader is ParaView's (vtkPVDReader), not in the vtk package: parse the
    # collection as XML and open every output it names with VTK's AMR reader.
    import xml.etree.ElementTree as ET

    root = ET.parse(path).getroot()
    assert root.get("type") == "Collection", root.attrib
    sets = root.findall("./Collection/DataSet")
    times = [float(d.get("timestep")) for d in sets]
    assert times == sorted(times) and len(set(times)) == len(times), f"time steps {times}"
    for d in sets:
        r = vtk.vtkXMLUniformGridAMRReader()
        r.SetFileName(os.path.join(os.path.dirname(path), d.get("file")))
        r.Update()
        assert r.GetOutput().GetNumberOfLevels() > 0, d.get("file")
    print(f"{path}: {len(sets)} outputs, t = {times[0]} .. {times[-1]}, each opened by the AMR reader: OK")


if __name__ == "__main__":
    check_vthb(sys.argv[1])
    if len(sys.argv) > 2:
        check_pvd(sys.argv[2])
