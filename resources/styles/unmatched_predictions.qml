<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<!-- PolyTopo: predictions no reference matched. Labels are off; turn them on in Layer Properties › Labels. -->
<qgis version="3.22.0" styleCategories="Symbology|Labeling" labelsEnabled="0">
  <renderer-v2 type="RuleRenderer" symbollevels="0" forceraster="0" enableorderby="0">
    <rules key="root">
      <rule key="all" filter="ELSE" symbol="0" label="unmatched: no reference matched (false positive)"/>
    </rules>
    <symbols>
      <symbol type="fill" name="0" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="99,99,99,120"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="PointPatternFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="distance_x" type="QString" value="2.2"/>
            <Option name="distance_y" type="QString" value="2.2"/>
            <Option name="displacement_x" type="QString" value="1.1"/>
            <Option name="displacement_y" type="QString" value="0"/>
          </Option>
          <symbol type="marker" name="@0@1" alpha="1" clip_to_extent="1" force_rhr="0">
            <layer class="SimpleMarker" enabled="1" pass="0" locked="0">
              <Option type="Map">
                <Option name="name" type="QString" value="circle"/>
                <Option name="size" type="QString" value="0.9"/>
                <Option name="color" type="QString" value="59,59,59,255"/>
                <Option name="outline_style" type="QString" value="no"/>
              </Option>
            </layer>
          </symbol>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="37,37,37,255"/>
            <Option name="line_width" type="QString" value="1.2"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="1"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="255,255,255,255"/>
            <Option name="line_width" type="QString" value="1.6"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="0,0,0,255"/>
            <Option name="line_width" type="QString" value="0.8"/>
            <Option name="line_style" type="QString" value="dash"/>
            <Option name="ring_filter" type="QString" value="2"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
    </symbols>
  </renderer-v2>
  <labeling type="simple">
    <settings calloutType="simple">
      <text-style fieldName="'holes ' || &quot;pred_holes&quot; || ' / ' || coalesce(to_string(&quot;ref_holes&quot;), '–')" isExpression="1" fontSize="8" fontSizeUnit="Point" textColor="0,0,0,255"/>
      <text-buffer bufferDraw="1" bufferSize="0.8" bufferSizeUnits="MM" bufferColor="255,255,255,255"/>
      <placement placement="1" dist="0"/>
    </settings>
  </labeling>
</qgis>
