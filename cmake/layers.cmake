# The layer table of docs/architecture.md as data: ORRERY_LAYER_<folder> lists the src/ folders a folder's
# files may include besides their own. cmake/check_layers.cmake enforces it over every #include
# (CTest `architecture.layers`), and checks that docs/architecture.md shows this same table.
set(ORRERY_LAYERS core workload formats hardware network cluster engine training models scenario
    explore dataflow compat report cli)
set(ORRERY_LAYER_core "")
set(ORRERY_LAYER_workload core)
set(ORRERY_LAYER_formats core workload)
set(ORRERY_LAYER_hardware core)
set(ORRERY_LAYER_network core engine)
set(ORRERY_LAYER_cluster core hardware network)
set(ORRERY_LAYER_engine core)
set(ORRERY_LAYER_training core workload formats hardware network cluster engine)
set(ORRERY_LAYER_models core workload)
set(ORRERY_LAYER_scenario core workload formats hardware network cluster engine training models
    dataflow compat report)
set(ORRERY_LAYER_explore core workload formats hardware network cluster engine training models
    scenario dataflow compat report)
set(ORRERY_LAYER_dataflow core workload)
set(ORRERY_LAYER_compat core workload)
set(ORRERY_LAYER_report core workload)
set(ORRERY_LAYER_cli core workload formats hardware network cluster engine training models
    scenario explore dataflow compat report)
